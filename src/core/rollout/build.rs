//! Rebuilding the requests from the lines: the history as it grows, where each model call
//! starts and ends, its usage, the governing `turn_context`, compaction, and what each request
//! body holds (recorded items verbatim, the rest reconstructed by Codex's rules).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};

use super::lines::parse_timestamp_ms;
use super::{ReconstructedRequest, RequestKind, RolloutSession, UsageSource, rules_for_version};
use crate::core::compile::compaction::checkpoint_message;
use crate::core::compile::items::{ItemContext, item_to_wire};
use crate::core::compile::{CompileNote, compile};
use crate::core::items::{PASSTHROUGH_KEY, ResponseItem};
use crate::core::json::JsonMap;
use crate::core::models::ModelCatalog;
use crate::core::prompt::{Dialect, Prompt, PromptMode, Setting};
use crate::core::provider::{Provider, ProviderKind};
use crate::core::rules::{BodyField, CompileRules};
use crate::core::stream::{TokenUsage, UsageCounts};

/// The bundled model catalog, parsed once: the model defaults (effort, verbosity, parallel tool
/// calls) of a rebuilt request come from it.
fn catalog() -> &'static ModelCatalog {
    static CATALOG: OnceLock<ModelCatalog> = OnceLock::new();
    CATALOG.get_or_init(ModelCatalog::bundled)
}

/// Item types a model call produces: the first one after an input marks a call's start.
const OUTPUT_TYPES: &[&str] = &[
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "image_generation_call",
    "tool_search_call",
    "compaction",
];

/// Item types Codex records but never sends.
const NOT_SENT: &[&str] = &["ghost_snapshot"];

/// The body fields of a request other than `input`, and what of them is not as recorded.
#[derive(Debug, Clone)]
struct Head {
    fields: JsonMap,
    input_at: usize,
    reconstructed: Vec<&'static str>,
    not_recorded: Vec<&'static str>,
}

/// A call whose first output has been seen.
#[derive(Debug, Clone, Copy)]
struct OpenCall {
    /// History length when it started: its input.
    input_len: usize,
    sent_at_ms: Option<i64>,
}

/// What the session's requests are rebuilt under: the rules preset of its Codex version and
/// its provider (passthrough metadata goes to the OpenAI provider only).
#[derive(Debug, Clone)]
struct Env {
    rules: CompileRules,
    provider: Provider,
}

/// The settings a request head depends on (heads are compiled once per distinct key).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct HeadKey {
    model: String,
    effort: Option<String>,
    summary: Option<String>,
    verbosity: Option<String>,
    lite: bool,
    compaction: bool,
}

/// One session being rebuilt.
#[derive(Debug, Default)]
struct Current {
    session: Option<RolloutSession>,
    env: Option<Arc<Env>>,
    heads: HashMap<HeadKey, Head>,
    base_instructions: Option<String>,
    /// Index in `items` of the reconstructed base-instructions message.
    instructions_item: Option<u32>,
    compaction_prompt_item: Option<u32>,
    turn_context: JsonMap,
    turn_id: Option<String>,
    /// The history, as indices into the session's items.
    history: Vec<u32>,
    call: Option<OpenCall>,
    last_ms: Option<i64>,
    records_seen: bool,
    last_total: Option<Value>,
    response_ids: HashSet<String>,
    /// Requests made before the current turn started.
    turn_start_request: usize,
}

/// Feeds lines; yields sessions.
#[derive(Debug, Default)]
pub(super) struct Builder {
    current: Current,
    done: Vec<RolloutSession>,
}

impl Builder {
    /// Takes one known line.
    pub(super) fn line(&mut self, line: usize, ms: Option<i64>, line_type: &str, payload: Value) {
        if line_type == "session_meta" {
            self.session_meta(ms, payload);
            if ms.is_some() {
                self.current.last_ms = ms;
            }
            return;
        }
        let c = &mut self.current;
        match line_type {
            _ if c.session.is_none() => {}
            "turn_context" => {
                if let Value::Object(map) = payload {
                    c.turn_id = str_field(&map, "turn_id").or(c.turn_id.take());
                    c.turn_context = map;
                }
            }
            "response_item" => c.item(ms, payload),
            "token_usage_record" => {
                c.records_seen = true;
                let usage = payload.get("usage").map(usage_of);
                let response_id = payload
                    .get("response_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let turn_id = payload
                    .get("turn_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                c.close(
                    line,
                    ms,
                    usage,
                    UsageSource::TokenUsageRecord,
                    response_id,
                    turn_id,
                );
            }
            "event_msg" => match payload.get("type").and_then(Value::as_str) {
                Some("task_started" | "turn_started") => {
                    c.turn_start_request = c.session.as_ref().map_or(0, |s| s.requests.len());
                    if let Some(id) = payload.get("turn_id").and_then(Value::as_str) {
                        c.turn_id = Some(id.to_string());
                    }
                }
                Some("thread_rolled_back") => {
                    let turns = payload
                        .get("num_turns")
                        .and_then(Value::as_u64)
                        .unwrap_or(1);
                    c.roll_back(turns);
                }
                Some("token_count") if !c.records_seen => {
                    let info = payload.get("info").filter(|i| !i.is_null());
                    let total = info.and_then(|i| i.get("total_token_usage")).cloned();
                    if total.is_some() && total != c.last_total {
                        c.last_total = total;
                        // A record with no input tokens reports nothing (Codex writes one
                        // with every count 0 before the first real one): no usage, not zero.
                        let usage = info
                            .and_then(|i| i.get("last_token_usage"))
                            .map(usage_of)
                            .filter(|u| u.input_tokens > 0);
                        let turn = c.turn_id.clone();
                        c.close(line, ms, usage, UsageSource::TokenCount, None, turn);
                    }
                }
                _ => {}
            },
            "compacted" => c.compacted(payload),
            _ => {}
        }
        if ms.is_some() {
            self.current.last_ms = ms;
        }
    }

    fn session_meta(&mut self, ms: Option<i64>, payload: Value) {
        let Value::Object(mut meta) = payload else {
            return;
        };
        let Some(id) = str_field(&meta, "id").or_else(|| str_field(&meta, "session_id")) else {
            return;
        };
        if self
            .current
            .session
            .as_ref()
            .is_some_and(|s| s.thread_id == id)
        {
            // Written again on resume: the same thread goes on.
            return;
        }
        let previous = std::mem::take(&mut self.current);
        if let Some(session) = previous.session {
            self.done.push(session);
        }
        let instructions = match meta.shift_remove("base_instructions") {
            Some(Value::Object(b)) => b.get("text").and_then(Value::as_str).map(str::to_string),
            Some(Value::String(text)) => Some(text),
            _ => None,
        }
        .or_else(|| {
            meta.shift_remove("instructions")
                .and_then(|v| v.as_str().map(str::to_string))
        })
        .filter(|t| !t.is_empty());
        let started_at_ms = meta
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_timestamp_ms)
            .or(ms);
        let cli_version = str_field(&meta, "cli_version");
        let rules = rules_for_version(cli_version.as_deref());
        let provider = match meta.get("model_provider").and_then(Value::as_str) {
            Some("openai") => Provider::preset(ProviderKind::Openai),
            Some(p) if p.eq_ignore_ascii_case("azure") => Provider::preset(ProviderKind::Azure),
            _ => Provider::preset(ProviderKind::Compatible),
        };
        self.current.base_instructions = instructions;
        self.current.env = Some(Arc::new(Env {
            rules: rules.clone(),
            provider,
        }));
        self.current.session = Some(RolloutSession {
            thread_id: id,
            rules: rules.name,
            item_rules: Vec::new(),
            cli_version,
            started_at_ms,
            meta,
            items: Vec::new(),
            requests: Vec::new(),
        });
    }

    /// The sessions read.
    pub(super) fn finish(mut self) -> Vec<RolloutSession> {
        if let Some(session) = self.current.session.take() {
            self.done.push(session);
        }
        self.done
    }
}

impl Current {
    fn push_item(&mut self, value: Value) -> u32 {
        let Some(session) = self.session.as_mut() else {
            return 0;
        };
        session.items.push(value);
        u32::try_from(session.items.len() - 1).unwrap_or(u32::MAX)
    }

    fn item(&mut self, ms: Option<i64>, payload: Value) {
        let Value::Object(item) = payload else {
            return;
        };
        let item_type = str_field(&item, "type").unwrap_or_default();
        if NOT_SENT.contains(&item_type.as_str()) {
            return;
        }
        let item = self.wire_item(item);
        let is_output = OUTPUT_TYPES.contains(&item_type.as_str())
            || (item_type == "message"
                && item.get("role").and_then(Value::as_str) == Some("assistant"));
        if is_output && self.call.is_none() {
            self.call = Some(OpenCall {
                input_len: self.history.len(),
                sent_at_ms: self.last_ms.or(ms),
            });
        }
        let index = self.push_item(item);
        self.history.push(index);
    }

    /// A recorded item as the client sends it, by the compiler's item rules under the session's
    /// preset and provider (passthrough metadata kept for the OpenAI provider only, unknown
    /// fields placed, id policy). What the rules changed is noted once per session.
    fn wire_item(&mut self, mut item: JsonMap) -> Value {
        let Some(env) = self.env.clone() else {
            return Value::Object(item);
        };
        let ctx = ItemContext {
            rules: &env.rules,
            stored: false,
            is_openai: env.provider.is_openai(),
            lite: false,
        };
        let mut notes: Vec<CompileNote> = Vec::new();
        let wire = match ResponseItem::from_value(Value::Object(item.clone())) {
            Ok(parsed) => item_to_wire(&parsed, ctx, "item", &mut notes),
            Err(_) => {
                // Not an item the compiler can read: kept as recorded, less what only the
                // OpenAI provider is sent.
                if !ctx.is_openai && item.shift_remove(PASSTHROUGH_KEY).is_some() {
                    notes.push(CompileNote::new(
                        format!("item.{PASSTHROUGH_KEY}"),
                        "dropped: passthrough metadata is only sent to the OpenAI provider",
                    ));
                }
                Value::Object(item)
            }
        };
        if let Some(session) = self.session.as_mut() {
            for note in notes {
                let field = note.path.strip_prefix("item.").unwrap_or(&note.path);
                let line = format!("{field}: {}", note.message);
                if !session.item_rules.contains(&line) {
                    session.item_rules.push(line);
                }
            }
        }
        wire
    }

    /// Ends the open call (or, when none is open, a call with the whole history as input).
    fn close(
        &mut self,
        line: usize,
        ms: Option<i64>,
        usage: Option<TokenUsage>,
        usage_source: UsageSource,
        response_id: Option<String>,
        turn_id: Option<String>,
    ) {
        let call = self.call.take().unwrap_or(OpenCall {
            input_len: self.history.len(),
            sent_at_ms: self.last_ms,
        });
        if let Some(id) = &response_id
            && !self.response_ids.insert(id.clone())
        {
            return;
        }
        let lite = self.is_lite_request();
        let mut input = Vec::with_capacity(call.input_len + 1);
        let mut reconstructed_items = Vec::new();
        if !lite && let Some(text) = self.base_instructions.clone() {
            let index = match self.instructions_item {
                Some(i) => i,
                None => {
                    let message = self.instructions_message(&text);
                    let i = self.push_item(message);
                    self.instructions_item = Some(i);
                    i
                }
            };
            reconstructed_items.push(0);
            input.push(index);
        }
        input.extend_from_slice(&self.history[..call.input_len.min(self.history.len())]);
        let head = self.head(lite, false);
        let Some(session) = self.session.as_mut() else {
            return;
        };
        session.requests.push(ReconstructedRequest {
            head: head.fields,
            input_at: head.input_at,
            input,
            kind: RequestKind::Turn,
            response_id,
            turn_id: turn_id.or_else(|| self.turn_id.clone()),
            usage,
            usage_source,
            sent_at_ms: call.sent_at_ms,
            finished_at_ms: ms,
            line,
            reconstructed_items,
            reconstructed_fields: head.reconstructed,
            not_recorded: head.not_recorded,
        });
    }

    /// The standard base-instructions message (`input[0]`) as the compiler builds it under the
    /// session's rules: a developer message with its synthesized `msg_<uuid v5>` id.
    fn instructions_message(&self, text: &str) -> Value {
        let fallback = || {
            json!({
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": text}]
            })
        };
        let (Some(env), Some(session)) = (&self.env, &self.session) else {
            return fallback();
        };
        let mut prompt = Prompt::new("unknown");
        prompt.thread_id = Some(session.thread_id.clone());
        prompt.base_instructions = sent_base_instructions(text, &env.rules);
        let model = catalog().lookup(&prompt.model);
        compile(
            &prompt,
            &model,
            &env.provider,
            Dialect::Standard,
            &env.rules,
        )
        .ok()
        .and_then(|c| c.body.get("input")?.get(0).cloned())
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("developer"))
        .unwrap_or_else(fallback)
    }

    /// The body fields other than `input`, in the rules' order, and what of them is
    /// reconstructed: the model and any explicit effort, summary or verbosity come from the
    /// governing `turn_context`; every other field (reasoning with the model's default effort,
    /// `include`, `text.verbosity`, `parallel_tool_calls`, `store`, …) is what the compiler
    /// gives under the session's rules preset and the bundled catalog.
    fn head(&mut self, lite: bool, compaction: bool) -> Head {
        let key = self.head_key(lite, compaction);
        if let Some(head) = self.heads.get(&key) {
            return head.clone();
        }
        let head = self.compile_head(&key);
        self.heads.insert(key, head.clone());
        head
    }

    /// The settings of the governing `turn_context`. Codex writes the effort as
    /// `collaboration_mode.settings.reasoning_effort` (0.169, 0.171; `null` = the model's
    /// default) or, in other versions, `effort` / `reasoning_effort` at the top.
    fn head_key(&self, lite: bool, compaction: bool) -> HeadKey {
        let tc = &self.turn_context;
        let settings = tc.get("collaboration_mode").and_then(|m| m.get("settings"));
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        let model = text(
            tc.get("model")
                .or_else(|| settings.and_then(|s| s.get("model")))
                .or_else(|| self.session.as_ref().and_then(|s| s.meta.get("model"))),
        )
        .unwrap_or_else(|| "unknown".to_string());
        let effort = text(tc.get("effort"))
            .or_else(|| text(tc.get("reasoning_effort")))
            .or_else(|| text(settings.and_then(|s| s.get("reasoning_effort"))));
        HeadKey {
            model,
            effort,
            summary: text(tc.get("summary")).or_else(|| text(tc.get("reasoning_summary"))),
            verbosity: text(tc.get("verbosity")).or_else(|| text(tc.get("model_verbosity"))),
            lite,
            compaction,
        }
    }

    fn compile_head(&self, key: &HeadKey) -> Head {
        let rules = self
            .env
            .as_ref()
            .map_or_else(CompileRules::codex_0_171, |e| e.rules.clone());
        let provider = self.env.as_ref().map_or_else(
            || Provider::preset(ProviderKind::Compatible),
            |e| e.provider.clone(),
        );
        let mut prompt = Prompt::new(&key.model);
        prompt.thread_id = self.session.as_ref().map(|s| s.thread_id.clone());
        let setting = |v: &Option<String>| v.clone().map_or(Setting::Default, Setting::Value);
        prompt.reasoning.effort = setting(&key.effort);
        prompt.reasoning.summary = setting(&key.summary);
        prompt.verbosity = setting(&key.verbosity);
        if key.compaction {
            prompt.mode = PromptMode::Compaction;
        }
        let dialect = if key.lite {
            Dialect::Lite
        } else {
            Dialect::Standard
        };
        let model = catalog().lookup(&key.model);
        let mut fields = JsonMap::new();
        let mut input_at = 2;
        let mut reconstructed = Vec::new();
        match compile(&prompt, &model, &provider, dialect, &rules) {
            Ok(compiled) => {
                for (key_name, value) in compiled.body.iter() {
                    let Some(field) = BodyField::from_key(key_name) else {
                        continue;
                    };
                    match field {
                        BodyField::Input => {
                            input_at = fields.len();
                            continue;
                        }
                        // A standard turn's tools are not recorded; the compaction call's
                        // are none (`[]`), which the compiler gives.
                        BodyField::Tools if !key.compaction => continue,
                        BodyField::ClientMetadata | BodyField::Instructions => continue,
                        BodyField::Model => {}
                        _ => reconstructed.push(field.key()),
                    }
                    fields.insert(key_name.clone(), value.clone());
                }
            }
            Err(_) => {
                fields.insert("model".to_string(), json!(key.model));
                fields.insert("stream".to_string(), json!(true));
                reconstructed.push("stream");
            }
        }
        reconstructed.sort_unstable();
        let mut not_recorded = Vec::new();
        if !key.lite && !key.compaction {
            not_recorded.push("tools");
        }
        not_recorded.push("client_metadata");
        Head {
            fields,
            input_at,
            reconstructed,
            not_recorded,
        }
    }

    /// A `thread_rolled_back` event: the history loses its last `turns` user turns (each from
    /// the user message that started it; Codex's own context messages do not start a turn).
    fn roll_back(&mut self, turns: u64) {
        self.call = None;
        let Some(session) = self.session.as_ref() else {
            return;
        };
        let starts: Vec<usize> = self
            .history
            .iter()
            .enumerate()
            .filter(|(_, i)| {
                session
                    .items
                    .get(**i as usize)
                    .is_some_and(starts_a_user_turn)
            })
            .map(|(k, _)| k)
            .collect();
        let turns = usize::try_from(turns).unwrap_or(usize::MAX).max(1);
        if let Some(&cut) = starts
            .len()
            .checked_sub(turns)
            .and_then(|k| starts.get(k))
            .or(starts.first())
        {
            self.history.truncate(cut);
        }
    }

    /// A `compacted` line: marks the compaction call and replaces the history.
    fn compacted(&mut self, payload: Value) {
        self.call = None;
        let target = payload
            .get("compaction_response_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        let turn_start = self.turn_start_request;
        let prompt = match self.compaction_prompt_item {
            Some(i) => i,
            None => {
                let i = self.push_item(checkpoint_message());
                self.compaction_prompt_item = Some(i);
                i
            }
        };
        let lite_before = self.is_lite_request();
        let head = self.head(lite_before, true);
        if let Some(session) = self.session.as_mut() {
            let by_id = target.as_deref().and_then(|id| {
                session
                    .requests
                    .iter()
                    .rposition(|r| r.response_id.as_deref() == Some(id))
            });
            // Without response ids (older files): the call made since the turn started, if any.
            let position = by_id.or_else(|| {
                session
                    .requests
                    .len()
                    .checked_sub(1)
                    .filter(|last| *last >= turn_start)
            });
            if let Some(request) = position.and_then(|p| session.requests.get_mut(p)) {
                request.kind = RequestKind::Compaction;
                request.reconstructed_items.push(request.input.len());
                request.input.push(prompt);
                request.head = head.fields;
                request.input_at = head.input_at;
                request.reconstructed_fields = head.reconstructed;
                request.not_recorded = head.not_recorded;
            }
        }
        let replacement = match payload.get("replacement_history") {
            Some(Value::Array(items)) => items.clone(),
            // Older files: the summary alone, as a user message.
            _ => payload
                .get("message")
                .and_then(Value::as_str)
                .map(|text| {
                    vec![json!({
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": text}]
                    })]
                })
                .unwrap_or_default(),
        };
        self.history.clear();
        for item in replacement {
            if let Value::Object(map) = item {
                let item = self.wire_item(map);
                let index = self.push_item(item);
                self.history.push(index);
            }
        }
    }

    fn is_lite_request(&self) -> bool {
        self.history
            .first()
            .and_then(|i| self.session.as_ref()?.items.get(*i as usize))
            .and_then(|v| v.get("type"))
            .and_then(Value::as_str)
            == Some("additional_tools")
    }
}

/// Whether `item` is a user message that starts a turn (not one of the context messages Codex
/// adds as the user: environment, AGENTS.md, skills, an aborted turn, a shell command).
fn starts_a_user_turn(item: &Value) -> bool {
    if item.get("type").and_then(Value::as_str) != Some("message")
        || item.get("role").and_then(Value::as_str) != Some("user")
    {
        return false;
    }
    let text: String = match item.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    };
    let text = text.trim_start();
    ![
        "<environment_context>",
        "# AGENTS.md instructions",
        "<user_instructions>",
        "<recommended_plugins>",
        "<skills_instructions>",
        "<turn_aborted>",
        "<user_shell_command>",
    ]
    .iter()
    .any(|p| text.starts_with(p))
}

fn str_field(map: &JsonMap, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A rollout usage object (`input_tokens`, `cached_input_tokens`, …, or any other shape
/// [`UsageCounts`] reads; 0 when absent or unreadable).
fn usage_of(value: &Value) -> TokenUsage {
    UsageCounts::from_value(value).unwrap_or_default().or_zero()
}

/// The bullet of the base instructions that Codex 0.171 leaves out of the request.
const CHECKLIST_BULLET: &str = "- If you create a checklist or task list, you update item statuses \
incrementally as each item is completed rather than marking every item done only at the end.\n";

/// The base instructions as Codex sends them, from the text `session_meta.base_instructions`
/// records. Codex 0.171 does not send that text word for word: its request leaves out the one
/// bullet [`CHECKLIST_BULLET`] (its line, list marker included), everything else byte for byte.
/// Found by capturing the real CLI 0.171 (`codex exec` and the TUI, against a stand-in
/// upstream) with its rollout: the request's `input[0]` text is `session_meta`'s text without
/// that line, in both; neither offered the `update_plan` tool, which the bullet is about, so the
/// rule may be "left out when `update_plan` is not offered" — the rollout does not record the
/// tools, so the item stays marked reconstructed. Rules before 0.171 keep the text as it is.
pub fn sent_base_instructions(recorded: &str, rules: &CompileRules) -> String {
    if rules.name == CompileRules::codex_0_169().name {
        return recorded.to_string();
    }
    recorded.replacen(CHECKLIST_BULLET, "", 1)
}
