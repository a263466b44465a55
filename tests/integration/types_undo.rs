//! Undo steps group typing by a typed field ([`EditField`]): consecutive edits of one field are
//! one step, and a different field — another item of the same kind included — starts a new one.

use pretty_assertions::assert_eq;
use promptwire::app::{AppCommand, AppOptions, AppState, EditField, PromptEdit};

fn edit(state: &mut AppState, edit: PromptEdit) {
    state.handle(AppCommand::Edit(Box::new(edit)));
}

#[test]
fn each_typed_field_is_one_undo_step() {
    let mut state = AppState::new(Default::default(), AppOptions::default());
    let steps = state.history.undo.len();
    for text in ["B", "Be", "Be terse."] {
        edit(&mut state, PromptEdit::BaseInstructions(text.to_string()));
    }
    for model in ["g", "gpt"] {
        edit(&mut state, PromptEdit::Model(model.to_string()));
    }
    edit(
        &mut state,
        PromptEdit::BaseUrl(Some("http://a".to_string())),
    );
    edit(&mut state, PromptEdit::CacheKey(Some("k".to_string())));
    edit(&mut state, PromptEdit::CacheKey(Some("k2".to_string())));
    assert_eq!(
        (
            state.history.undo.len() - steps,
            state.history.last_field,
            state.prompt.model.as_str(),
            state.prompt.base_instructions.as_str(),
        ),
        (4, Some(EditField::CacheKey), "gpt", "Be terse.")
    );
}

#[test]
fn items_of_the_same_kind_are_separate_fields() {
    let fields: Vec<Option<EditField>> = [
        PromptEdit::OutputSchema(None),
        PromptEdit::Strict(true),
        PromptEdit::RemoveItem(0),
    ]
    .iter()
    .map(PromptEdit::field)
    .collect();
    assert_eq!(fields, vec![Some(EditField::Schema), None, None]);
    assert_ne!(EditField::Item(0), EditField::Item(1));
    assert_ne!(EditField::Item(0), EditField::Tool(0));
}
