//! The agents of a stored run: a session and the sessions of the subagents below it (linked by
//! thread, `links.rs`), each an anatomy agent whose figures come from its own session's ledger
//! (a subagent is a conversation of its own: its prompt cache is its own), as a tree whose
//! totals include the children. The app's Anatomy tab and `promptwire anatomy --session` read
//! it.

use crate::core::anatomy::Agent;
use crate::core::anatomy::AgentTag;
use crate::core::anatomy::agents::{AgentNode, tree};
use crate::core::ledger::{self, Ledger, Rules};
use crate::core::prefix::Session;

use super::Store;
use super::prefix_input::{PrefixInputError, push_stored_session};

/// The agents of stored session `root` and the subagent sessions below it, depth first, each
/// with its own figures and its totals with its descendants'. `root_ledger` is `root`'s ledger
/// (already computed by the caller); each child's is computed here under `rules`. A session
/// whose recording names no thread is called `session N`.
pub fn stored_agents(
    store: &Store,
    root: i64,
    rules: &Rules,
    root_ledger: &Ledger,
) -> Result<Vec<Agent>, PrefixInputError> {
    let sessions = store.agent_sessions(root)?;
    let mut nodes = Vec::with_capacity(sessions.len());
    for (id, tag) in sessions {
        let tag = tag.unwrap_or_else(|| AgentTag {
            thread: format!("session {id}"),
            ..AgentTag::default()
        });
        if id == root {
            nodes.push(AgentNode::of_ledger(tag, Some(id), root_ledger));
            continue;
        }
        let mut session = Session::default();
        match push_stored_session(&mut session, store, id) {
            Ok(()) => {}
            // A child recorded without any request yet is an agent with nothing to count.
            Err(PrefixInputError::Empty(_)) => {}
            Err(e) => return Err(e),
        }
        let ledger = ledger::ledger(&session, rules);
        nodes.push(AgentNode::of_ledger(tag, Some(id), &ledger));
    }
    Ok(tree(nodes))
}
