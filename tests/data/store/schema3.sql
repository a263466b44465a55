-- A database written by promptwire at schema version 3 (bodies cut into pieces, events one row
-- each, headers as JSON), as SQL: made by the schema-3 build from two sample HARs, a Codex rollout
-- and bodies that are not JSON objects; tests/store_migrate_v4.rs builds the file from it and
-- checks that every request, body, header, event and outcome comes back as schema 3 read it
-- (schema3.expected.jsonl, written by the same build).
PRAGMA user_version = 3;
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    source      TEXT NOT NULL,          -- form / send / proxy / import
    provider    TEXT,
    model       TEXT,
    created_us  INTEGER NOT NULL        -- Unix time, microseconds
, replay_of INTEGER REFERENCES sessions(id) ON DELETE SET NULL);
INSERT INTO sessions VALUES(1,'tool-calls','import','openai','gpt-5.5',1795168800000000,NULL);
INSERT INTO sessions VALUES(2,'failing-stream','import','openai','gpt-5.5',1795176000000000,NULL);
INSERT INTO sessions VALUES(3,'Codex 0.171.0 · list the files here [01a22d4f-1225-7c73-acaf-5af18cd6a382]','import','standin','gpt-6.2-sol',1796056486451000,NULL);
INSERT INTO sessions VALUES(4,'odd bodies','form',NULL,NULL,1,NULL);
CREATE TABLE items (
    id    INTEGER PRIMARY KEY,
    hash  BLOB NOT NULL UNIQUE,
    json  TEXT NOT NULL
);
INSERT INTO items VALUES(1,X'50af22302f7240cc8a444a49b0810ee3','{"type":"message","id":"msg_f40c8ca1-e5dd-5238-892e-a1acf9ba1093","role":"developer","content":[{"type":"input_text","text":"You are a coding agent working in a sandboxed repository. Use the shell tool to inspect files before you answer."}]}');
INSERT INTO items VALUES(2,X'047de8cbf845b4dff882de1456bc6038','{"type":"message","id":"msg_0196a2c2-0001-7000-8000-000000000001","role":"user","content":[{"type":"input_text","text":"How many Rust files are in src/?"}]}');
INSERT INTO items VALUES(3,X'957ecc7dd6de9070173f7a844ba48c4d','{"type":"reasoning","id":"rs_4f1c2a","summary":[{"type":"summary_text","text":"**Counting files** with find"}],"content":null,"encrypted_content":"gAAAAB-opaque-reasoning-blob-1"}');
INSERT INTO items VALUES(4,X'39c2753444e5f3a8db7b48c34971a641','{"type":"function_call","status":"completed","id":"fc_7d21e0","name":"shell","arguments":"{\"cmd\":\"find src -name ''*.rs'' | wc -l\"}","call_id":"call_A1"}');
INSERT INTO items VALUES(5,X'374642b35652149cb72344a0edb8f674','{"type":"function_call_output","id":"fco_0196a2c2-0002-7000-8000-000000000002","call_id":"call_A1","output":"14\n"}');
INSERT INTO items VALUES(6,X'6f4910a92994e8e14f787bb11319adef','{"type":"message","status":"completed","id":"msg_9e0b11","role":"assistant","content":[{"type":"output_text","text":"There are 14 Rust files in src/.","annotations":[]}],"phase":"final_answer"}');
INSERT INTO items VALUES(7,X'ea26c797a66cc96350762877c06f2d13','{"type":"message","id":"msg_0196a2c2-0003-7000-8000-000000000003","role":"user","content":[{"type":"input_text","text":"Which one is the largest?"}]}');
INSERT INTO items VALUES(8,X'169facb01c4148e1e7358042fd76d457','{"type":"message","id":"msg_d315eb5c-080c-557a-9edb-293a53b0a4a0","role":"developer","content":[{"type":"input_text","text":"You are a careful coding assistant. Answer briefly."}]}');
INSERT INTO items VALUES(9,X'64b919af45e7eaf95b88751e8b45abfc','{"type":"message","role":"user","content":[{"type":"input_text","text":"What does `git rebase --onto` do?"}]}');
INSERT INTO items VALUES(10,X'ce6481a38506cc43e732d7698a079a80','{"type":"additional_tools","id":"at_01a22d4f-1295-79f3-9687-376c17e5bc75","role":"developer","tools":[{"type":"namespace","name":"functions","description":"","tools":[{"type":"custom","name":"exec","description":"<13403 chars elided>","format":{"type":"grammar","syntax":"lark","definition":"<177 chars elided>"}},{"type":"function","name":"wait","description":"<769 chars elided>","strict":false,"parameters":{"type":"object","properties":{"cell_id":{"type":"string","description":"Identifier of the running exec cell."},"max_tokens":{"type":"number","description":"Output token budget for this wait call. Defaults to 10000 tokens."},"terminate":{"type":"boolean","description":"True stops the running exec cell; false or omitted waits for output."},"yield_time_ms":{"type":"number","description":"Wait before yielding more output. Defaults to 10000 ms."}},"required":["cell_id"],"additionalProperties":false}},{"type":"function","name":"request_user_input","description":"Request user input for one to three short questions and wait for the response. This tool is only available in Plan mode.","strict":false,"parameters":{"type":"object","properties":{"questions":{"type":"array","description":"Questions to show the user. Prefer 1 and do not exceed 3","items":{"type":"object","properties":{"header":{"type":"string","description":"Short header label shown in the UI (12 or fewer chars)."},"id":{"type":"string","description":"Stable identifier for mapping answers (snake_case)."},"options":{"type":"array","description":"<224 chars elided>","items":{"type":"object","properties":{"description":{"type":"string","description":"One short sentence explaining impact/tradeoff if selected."},"label":{"type":"string","description":"User-facing label (1-5 words)."}},"required":["label","description"],"additionalProperties":false}},"question":{"type":"string","description":"Single-sentence prompt shown to the user."}},"required":["id","header","question","options"],"additionalProperties":false}}},"required":["questions"],"additionalProperties":false}},{"type":"function","name":"request_user_input_async","description":"<556 chars elided>","strict":false,"parameters":{"type":"object","properties":{"questions":{"type":"array","description":"One or more self-contained questions to present together, in display order.","items":{"type":"object","properties":{"options":{"type":"array","description":"<324 chars elided>","items":{"type":"string"},"minItems":1},"title":{"type":"string","description":"The complete question shown to the user, including any context needed to answer it."}},"required":["title"],"additionalProperties":false},"minItems":1}},"required":["questions"],"additionalProperties":false}},{"type":"function","name":"send_message_to_user_async","description":"<613 chars elided>","strict":false,"parameters":{"type":"object","properties":{"message":{"type":"string","description":"The concise question or update to send to the user."}},"required":["message"],"additionalProperties":false}}]},{"type":"namespace","name":"clock","description":"Tools for reading and waiting on time.","tools":[{"type":"function","name":"sleep","description":"Pause execution for a specified duration. The sleep ends early when new input arrives for the active turn. Returns the elapsed wall-clock time.","strict":false,"parameters":{"type":"object","properties":{"duration_ms":{"type":"number","description":"How long to sleep in milliseconds. Must be between 1 and 43200000."}},"required":["duration_ms"],"additionalProperties":false}}]},{"type":"namespace","name":"collaboration","description":"Tools for spawning and managing sub-agents.","tools":[{"type":"function","name":"followup_task","description":"<232 chars elided>","strict":false,"parameters":{"type":"object","properties":{"message":{"type":"string","description":"Message text to send to the target agent.","encrypted":true},"target":{"type":"string","description":"Agent id or canonical task name to send a follow-up task to (from spawn_agent)."}},"required":["target","message"],"additionalProperties":false}},{"type":"function","name":"interrupt_agent","description":"Interrupt an agent''s current turn, if any, and return its previous status. The agent remains available for messages and follow-up tasks.","strict":false,"parameters":{"type":"object","properties":{"target":{"type":"string","description":"Agent id or canonical task name to interrupt (from spawn_agent)."}},"required":["target"],"additionalProperties":false}},{"type":"function","name":"list_agents","description":"List live agents in the current root thread tree. Optionally filter by task-path prefix.","strict":false,"parameters":{"type":"object","properties":{"path_prefix":{"type":"string","description":"Task-path prefix filter without a trailing slash. Omit to list all live agents."}},"additionalProperties":false}},{"type":"function","name":"send_message","description":"Send a message to an existing agent. The message will be delivered promptly. Does not trigger a new turn.","strict":false,"parameters":{"type":"object","properties":{"message":{"type":"string","description":"Message text to queue on the target agent.","encrypted":true},"target":{"type":"string","description":"Relative or canonical task name to message (from spawn_agent)."}},"required":["target","message"],"additionalProperties":false}},{"type":"function","name":"spawn_agent","description":"<2785 chars elided>","strict":false,"parameters":{"type":"object","properties":{"fork_turns":{"type":"string","description":"Parent history to inherit. Defaults to `all`; use `none` to start without parent history. Only `all` and `none` are supported."},"message":{"type":"string","description":"Initial plain-text task for the new agent.","encrypted":true},"model":{"type":"string","description":"Model override for the new agent. Omit unless an explicit override is needed."},"reasoning_effort":{"type":"string","description":"Reasoning effort override for the new agent. Omit to inherit the parent effort."},"task_name":{"type":"string","description":"Task name for the new agent. Use lowercase letters, digits, and underscores."}},"required":["task_name","message"],"additionalProperties":false}},{"type":"function","name":"wait_agent","description":"<383 chars elided>","strict":false,"parameters":{"type":"object","properties":{"timeout_ms":{"type":"number","description":"Timeout in milliseconds. Defaults to 30000, min 10000, max 3600000."}},"additionalProperties":false}}]}]}');
INSERT INTO items VALUES(11,X'55d8116a255449052583d49ccc3eb7ab','{"type":"message","id":"msg_01a22d4f-1295-79f3-9687-377544a7f141","role":"developer","content":[{"type":"input_text","text":"<25933 chars elided>"}]}');
INSERT INTO items VALUES(12,X'679a4213eedf8f9849622bd8e8e00a12','{"type":"message","id":"msg_01a22d4f-1295-79f3-9687-37878645d86a","role":"developer","content":[{"type":"input_text","text":"<2119 chars elided>"},{"type":"input_text","text":"<341 chars elided>"},{"type":"input_text","text":"<1056 chars elided>"}]}');
INSERT INTO items VALUES(13,X'b8718e28579e0dcee9093e188f2c2de2','{"type":"message","id":"msg_01a22d4f-1295-79f3-9687-37999a7ae51e","role":"developer","content":[{"type":"input_text","text":"<2400 chars elided>"}]}');
INSERT INTO items VALUES(14,X'93e35c35f8c5926a41cff46527ad4eee','{"type":"message","id":"msg_01a22d4f-1295-79f3-9687-37a980533949","role":"developer","content":[{"type":"input_text","text":"<271 chars elided>"}]}');
INSERT INTO items VALUES(15,X'a2137da27a57446bd30288ddb7dd71a0','{"type":"message","id":"msg_01a22d4f-1295-79f3-9687-37b079360403","role":"user","content":[{"type":"input_text","text":"<431 chars elided>"}]}');
INSERT INTO items VALUES(16,X'36f5552ba2a74f1f2721d24e6d42433c','{"type":"message","id":"msg_01a22d4f-12a5-7440-82e6-b8054129d60c","role":"user","content":[{"type":"input_text","text":"list the files here"}]}');
INSERT INTO items VALUES(17,X'763fa0e0d6e30797b94dff00984bf18a','{"type":"reasoning","id":"rs_0000","summary":[{"type":"summary_text","text":"Planning next step"}],"content":null,"encrypted_content":"gAAAAd6591bf66fcd6cd102cb0b0adcc6349b877167e7ef1506908f2b7b4a2dc55578"}');
INSERT INTO items VALUES(18,X'24f4cbd7bab27178ef891d0d7519fc17','{"type":"function_call","status":"completed","id":"fc_0000","name":"exec_command","arguments":"{\"cmd\": \"ls\"}","call_id":"call_0000"}');
INSERT INTO items VALUES(19,X'35b5ceaee4a23dc0136b2dabe2c9aec2','{"type":"function_call_output","id":"fco_01a22d4f-1385-75d3-a8c7-684a56de4150","call_id":"call_0000","output":"Chunk ID: 2dfcf2\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 5\nOutput:\nREADME.md\nmain.rs\n"}');
INSERT INTO items VALUES(20,X'0e31869dc0cf2160a651e7114892df94','{"type":"reasoning","id":"rs_0001","summary":[{"type":"summary_text","text":"Planning next step"}],"content":null,"encrypted_content":"gAAAA3b78ab99f6083397485adb89b67647da60e806a638a904c5b860932f96607980"}');
INSERT INTO items VALUES(21,X'abef4a930ab7e1660a008ed6f8c63f1a','{"type":"message","status":"completed","id":"msg_0001","role":"assistant","content":[{"type":"output_text","text":"README.md and main.rs.","annotations":[]}]}');
INSERT INTO items VALUES(22,X'f2679ebf9d2525bade96a643fbbdfc4a','{"type":"message","id":"msg_01a22d4f-1682-7c73-9cc3-cf889970ad34","role":"user","content":[{"type":"input_text","text":"what is the line count of each file"}]}');
INSERT INTO items VALUES(23,X'337d5008cf95b30f1b21408283b24e9a','{"type":"reasoning","id":"rs_0002","summary":[{"type":"summary_text","text":"Planning next step"}],"content":null,"encrypted_content":"gAAAA9bf6816e98e0d90c0034587d7f7cdc70afc57c3bacc9f12b6865572e0e5cb3d2"}');
INSERT INTO items VALUES(24,X'f68af303e199189b52b0060928a638df','{"type":"function_call","status":"completed","id":"fc_0002","name":"exec_command","arguments":"{\"cmd\": \"wc -l main.rs\"}","call_id":"call_0002"}');
INSERT INTO items VALUES(25,X'3c8d6ad35e282a14c1759547e1815013','{"type":"function_call_output","id":"fco_01a22d4f-1734-7932-b97d-8221985b4262","call_id":"call_0002","output":"Chunk ID: 927005\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\n1 main.rs\n"}');
INSERT INTO items VALUES(26,X'af9a4cdf6a04c27b5c9546b75981306f','{"type":"reasoning","id":"rs_0003","summary":[{"type":"summary_text","text":"Planning next step"}],"content":null,"encrypted_content":"gAAAA46d4b210b5bdbab6e36f10914ee37e7da2cc538bb7d923969ba1824802a7ae03"}');
INSERT INTO items VALUES(27,X'f636ce26e74899dbeb626947f1d86f7b','{"type":"function_call","status":"completed","id":"fc_0003","name":"exec_command","arguments":"{\"cmd\": \"wc -l README.md\"}","call_id":"call_0003"}');
INSERT INTO items VALUES(28,X'b3a9e73ac4dec87212cb67b1f1f807a1','{"type":"function_call_output","id":"fco_01a22d4f-17c2-7ae1-b9cd-cb0e36a87c59","call_id":"call_0003","output":"Chunk ID: 961ba9\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\n1 README.md\n"}');
INSERT INTO items VALUES(29,X'2d832a73ed2aadadf89a722c74b109d0','{"text":"café \ud83d\ude00"}');
CREATE TABLE fields (
    id    INTEGER PRIMARY KEY,
    hash  BLOB NOT NULL UNIQUE,
    json  TEXT NOT NULL
);
INSERT INTO fields VALUES(1,X'e655e23fd0bb11030a8ed472b04e8c16','{"model":"gpt-6.2-sol","stream":true,"tool_choice":"auto","parallel_tool_calls":false,"reasoning":{"effort":"low","context":"all_turns"},"store":false,"include":["reasoning.encrypted_content"],"prompt_cache_key":"01a22d4f-1225-7c73-acaf-5af18cd6a382","text":{"verbosity":"low"}}');
CREATE TABLE requests (
    id               INTEGER PRIMARY KEY,
    session_id       INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position         INTEGER NOT NULL,
    dialect          TEXT,
    rules            TEXT,
    provider         TEXT,
    model            TEXT,
    method           TEXT NOT NULL,
    url              TEXT NOT NULL,
    fields_id        INTEGER REFERENCES fields(id),
    input_at         INTEGER,           -- index of `input` among the body keys
    input_items      BLOB NOT NULL,     -- item ids, LEB128 varints, in order
    body_verbatim    BLOB,              -- exact bytes when the rebuilt value would differ
    body_bytes       INTEGER NOT NULL,
    headers          TEXT NOT NULL,     -- JSON [[name, value]], secret headers dropped
    extra            TEXT,              -- JSON object: anything else worth keeping
    started_us       INTEGER,           -- Unix time, microseconds
    status           INTEGER,
    response_headers TEXT,              -- JSON [[name, value]]
    response_body    TEXT,              -- a non-SSE (error) response body
    wait_us          INTEGER,           -- to the response headers
    total_us         INTEGER, body_pieces BLOB,           -- to the end of the response
    UNIQUE (session_id, position)
);
INSERT INTO requests VALUES(1,1,0,'standard','codex-0.169','openai','gpt-5.5','POST','https://api.openai.com/v1/responses',NULL,NULL,X'0102',NULL,1356,'[["version","0.169.0"],["x-codex-beta-features","remote_compaction_v2"],["x-codex-window-id","0196a2c2-0000-7000-8000-00000000abcd:0"],["x-codex-turn-metadata","{\"session_id\":\"0196a2c2-0000-7000-8000-00000000abcd\",\"thread_id\":\"0196a2c2-0000-7000-8000-00000000abcd\",\"turn_id\":\"0196a2c2-0004-7000-8000-000000000004\",\"window_id\":\"0196a2c2-0000-7000-8000-00000000abcd:0\",\"window_number\":0,\"request_kind\":\"turn\",\"model\":\"gpt-5.5\",\"reasoning_effort\":\"high\"}"],["x-client-request-id","0196a2c2-0000-7000-8000-00000000abcd"],["session-id","0196a2c2-0000-7000-8000-00000000abcd"],["thread-id","0196a2c2-0000-7000-8000-00000000abcd"],["accept","text/event-stream"],["content-type","application/json"],["originator","codex_exec"],["user-agent","codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)"]]',NULL,1795168800000000,200,'[["content-type","text/event-stream"],["x-request-id","req_sample_0001"]]',NULL,420000,630000,X'0100020304050605070809');
INSERT INTO requests VALUES(2,1,1,'standard','codex-0.169','openai','gpt-5.5','POST','https://api.openai.com/v1/responses',NULL,NULL,X'0102030405',NULL,1808,'[["version","0.169.0"],["x-codex-beta-features","remote_compaction_v2"],["x-codex-window-id","0196a2c2-0000-7000-8000-00000000abcd:0"],["x-codex-turn-metadata","{\"session_id\":\"0196a2c2-0000-7000-8000-00000000abcd\",\"thread_id\":\"0196a2c2-0000-7000-8000-00000000abcd\",\"turn_id\":\"0196a2c2-0004-7000-8000-000000000004\",\"window_id\":\"0196a2c2-0000-7000-8000-00000000abcd:0\",\"window_number\":0,\"request_kind\":\"turn\",\"model\":\"gpt-5.5\",\"reasoning_effort\":\"high\"}"],["x-client-request-id","0196a2c2-0000-7000-8000-00000000abcd"],["session-id","0196a2c2-0000-7000-8000-00000000abcd"],["thread-id","0196a2c2-0000-7000-8000-00000000abcd"],["accept","text/event-stream"],["content-type","application/json"],["originator","codex_exec"],["user-agent","codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)"]]',NULL,1795168845000000,200,'[["content-type","text/event-stream"],["x-request-id","req_sample_0002"]]',NULL,420000,665000,X'0100020304050605070809');
INSERT INTO requests VALUES(3,1,2,'standard','codex-0.169','openai','gpt-5.5','POST','https://api.openai.com/v1/responses',NULL,NULL,X'01020304050607',NULL,2152,'[["version","0.169.0"],["x-codex-beta-features","remote_compaction_v2"],["x-codex-window-id","0196a2c2-0000-7000-8000-00000000abcd:0"],["x-codex-turn-metadata","{\"session_id\":\"0196a2c2-0000-7000-8000-00000000abcd\",\"thread_id\":\"0196a2c2-0000-7000-8000-00000000abcd\",\"turn_id\":\"0196a2c2-0004-7000-8000-000000000004\",\"window_id\":\"0196a2c2-0000-7000-8000-00000000abcd:0\",\"window_number\":0,\"request_kind\":\"turn\",\"model\":\"gpt-5.5\",\"reasoning_effort\":\"high\"}"],["x-client-request-id","0196a2c2-0000-7000-8000-00000000abcd"],["session-id","0196a2c2-0000-7000-8000-00000000abcd"],["thread-id","0196a2c2-0000-7000-8000-00000000abcd"],["accept","text/event-stream"],["content-type","application/json"],["originator","codex_exec"],["user-agent","codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)"]]',NULL,1795168890000000,200,'[["content-type","text/event-stream"],["x-request-id","req_sample_0003"]]',NULL,420000,630000,X'0100020304050605070809');
INSERT INTO requests VALUES(4,2,0,'standard','codex-0.169','openai','gpt-5.5','POST','https://api.openai.com/v1/responses',NULL,NULL,X'0809',NULL,566,'[["version","0.169.0"],["x-codex-beta-features","remote_compaction_v2"],["x-codex-window-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77:0"],["x-codex-turn-metadata","{\"session_id\":\"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77\",\"thread_id\":\"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77\",\"window_id\":\"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77:0\",\"window_number\":0,\"request_kind\":\"turn\",\"model\":\"gpt-5.5\",\"reasoning_effort\":\"medium\"}"],["x-client-request-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77"],["session-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77"],["thread-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77"],["accept","text/event-stream"],["content-type","application/json"],["originator","codex_exec"],["user-agent","codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)"]]',NULL,1795176000000000,200,'[["content-type","text/event-stream"],["x-request-id","req_sample_0005"]]',NULL,420000,490000,X'01000a0b0c');
INSERT INTO requests VALUES(5,2,1,'standard','codex-0.169','openai','gpt-5.5','POST','https://api.openai.com/v1/responses',NULL,NULL,X'0809',NULL,566,'[["version","0.169.0"],["x-codex-beta-features","remote_compaction_v2"],["x-codex-window-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77:0"],["x-codex-turn-metadata","{\"session_id\":\"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77\",\"thread_id\":\"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77\",\"window_id\":\"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77:0\",\"window_number\":0,\"request_kind\":\"turn\",\"model\":\"gpt-5.5\",\"reasoning_effort\":\"medium\"}"],["x-client-request-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77"],["session-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77"],["thread-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77"],["accept","text/event-stream"],["content-type","application/json"],["originator","codex_exec"],["user-agent","codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)"]]',NULL,1795176045000000,500,'[["content-type","application/json"],["x-request-id","req_sample_0006"]]','{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}',420000,420000,X'01000a0b0c');
INSERT INTO requests VALUES(6,2,2,'standard','codex-0.169','openai','gpt-5.5','POST','https://api.openai.com/v1/responses',NULL,NULL,X'0809',NULL,566,'[["version","0.169.0"],["x-codex-beta-features","remote_compaction_v2"],["x-codex-window-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77:0"],["x-codex-turn-metadata","{\"session_id\":\"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77\",\"thread_id\":\"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77\",\"window_id\":\"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77:0\",\"window_number\":0,\"request_kind\":\"turn\",\"model\":\"gpt-5.5\",\"reasoning_effort\":\"medium\"}"],["x-client-request-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77"],["session-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77"],["thread-id","0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77"],["accept","text/event-stream"],["content-type","application/json"],["originator","codex_exec"],["user-agent","codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)"]]',NULL,1795176090000000,200,'[["content-type","text/event-stream"],["x-request-id","req_sample_0007"]]',NULL,420000,560000,X'01000a0b0c');
INSERT INTO requests VALUES(7,3,0,'lite','codex-0.171','standin','gpt-6.2-sol','POST','codex-rollout:/responses',1,2,X'0a0b0c0d0e0f10',NULL,7770,'[]','{"rollout":{"file":"tests/data/rollouts/codex-0.171-lite-resume-same-model/rollout-2026-11-30T16-34-46-01a22d4f-1225-7c73-acaf-5af18cd6a382.jsonl","line":17,"thread_id":"01a22d4f-1225-7c73-acaf-5af18cd6a382","cli_version":"0.171.0","rules":"codex-0.171","item_rules":["internal_chat_message_metadata_passthrough: dropped: passthrough metadata is only sent to the OpenAI provider"],"kind":"turn","response_id":"resp_0000","turn_id":"01a22d4f-1259-76c3-b0aa-09534e28ee72","usage_source":"token_usage_record","input_items":7,"reconstructed_items":[],"reconstructed_fields":["include","parallel_tool_calls","prompt_cache_key","reasoning","store","stream","text","tool_choice"],"not_recorded":["client_metadata"],"unknown_lines":[],"truncated_last_line":null}}',1796056486595000,NULL,'[]',NULL,NULL,3000,NULL);
INSERT INTO requests VALUES(8,3,1,'lite','codex-0.171','standin','gpt-6.2-sol','POST','codex-rollout:/responses',1,2,X'0a0b0c0d0e0f10111213',NULL,8355,'[]','{"rollout":{"file":"tests/data/rollouts/codex-0.171-lite-resume-same-model/rollout-2026-11-30T16-34-46-01a22d4f-1225-7c73-acaf-5af18cd6a382.jsonl","line":25,"thread_id":"01a22d4f-1225-7c73-acaf-5af18cd6a382","cli_version":"0.171.0","rules":"codex-0.171","item_rules":["internal_chat_message_metadata_passthrough: dropped: passthrough metadata is only sent to the OpenAI provider"],"kind":"turn","response_id":"resp_0001","turn_id":"01a22d4f-1259-76c3-b0aa-09534e28ee72","usage_source":"token_usage_record","input_items":10,"reconstructed_items":[],"reconstructed_fields":["include","parallel_tool_calls","prompt_cache_key","reasoning","store","stream","text","tool_choice"],"not_recorded":["client_metadata"]}}',1796056486831000,NULL,'[]',NULL,NULL,8000,NULL);
INSERT INTO requests VALUES(9,3,2,'lite','codex-0.171','standin','gpt-6.2-sol','POST','codex-rollout:/responses',1,2,X'0a0b0c0d0e0f10111213141516',NULL,8881,'[]','{"rollout":{"file":"tests/data/rollouts/codex-0.171-lite-resume-same-model/rollout-2026-11-30T16-34-46-01a22d4f-1225-7c73-acaf-5af18cd6a382.jsonl","line":36,"thread_id":"01a22d4f-1225-7c73-acaf-5af18cd6a382","cli_version":"0.171.0","rules":"codex-0.171","item_rules":["internal_chat_message_metadata_passthrough: dropped: passthrough metadata is only sent to the OpenAI provider"],"kind":"turn","response_id":"resp_0002","turn_id":"01a22d4f-1668-7512-8d0d-7b3fe75cd98e","usage_source":"token_usage_record","input_items":13,"reconstructed_items":[],"reconstructed_fields":["include","parallel_tool_calls","prompt_cache_key","reasoning","store","stream","text","tool_choice"],"not_recorded":["client_metadata"]}}',1796056487598000,NULL,'[]',NULL,NULL,3000,NULL);
INSERT INTO requests VALUES(10,3,3,'lite','codex-0.171','standin','gpt-6.2-sol','POST','codex-rollout:/responses',1,2,X'0a0b0c0d0e0f10111213141516171819',NULL,9468,'[]','{"rollout":{"file":"tests/data/rollouts/codex-0.171-lite-resume-same-model/rollout-2026-11-30T16-34-46-01a22d4f-1225-7c73-acaf-5af18cd6a382.jsonl","line":43,"thread_id":"01a22d4f-1225-7c73-acaf-5af18cd6a382","cli_version":"0.171.0","rules":"codex-0.171","item_rules":["internal_chat_message_metadata_passthrough: dropped: passthrough metadata is only sent to the OpenAI provider"],"kind":"turn","response_id":"resp_0003","turn_id":"01a22d4f-1668-7512-8d0d-7b3fe75cd98e","usage_source":"token_usage_record","input_items":16,"reconstructed_items":[],"reconstructed_fields":["include","parallel_tool_calls","prompt_cache_key","reasoning","store","stream","text","tool_choice"],"not_recorded":["client_metadata"]}}',1796056487757000,NULL,'[]',NULL,NULL,2000,NULL);
INSERT INTO requests VALUES(11,3,4,'lite','codex-0.171','standin','gpt-6.2-sol','POST','codex-rollout:/responses',1,2,X'0a0b0c0d0e0f101112131415161718191a1b1c',NULL,10059,'[]','{"rollout":{"file":"tests/data/rollouts/codex-0.171-lite-resume-same-model/rollout-2026-11-30T16-34-46-01a22d4f-1225-7c73-acaf-5af18cd6a382.jsonl","line":51,"thread_id":"01a22d4f-1225-7c73-acaf-5af18cd6a382","cli_version":"0.171.0","rules":"codex-0.171","item_rules":["internal_chat_message_metadata_passthrough: dropped: passthrough metadata is only sent to the OpenAI provider"],"kind":"turn","response_id":"resp_0004","turn_id":"01a22d4f-1668-7512-8d0d-7b3fe75cd98e","usage_source":"token_usage_record","input_items":19,"reconstructed_items":[],"reconstructed_fields":["include","parallel_tool_calls","prompt_cache_key","reasoning","store","stream","text","tool_choice"],"not_recorded":["client_metadata"]}}',1796056487903000,NULL,'[]',NULL,NULL,3000,NULL);
INSERT INTO requests VALUES(12,4,0,NULL,NULL,NULL,NULL,'POST','http://127.0.0.1:9/v1/responses',NULL,NULL,X'',X'6e6f74206a736f6e20617420616c6c',15,'[["content-type","application/json"],["x-custom","v"]]','{"k":1}',5,500,'[["content-type","application/json"]]','{"error":"boom"}',1,2,NULL);
INSERT INTO requests VALUES(13,4,1,NULL,NULL,NULL,'m','POST','http://127.0.0.1:9/v1/responses',NULL,NULL,X'',NULL,41,'[["content-type","application/json"],["x-custom","v"]]','{"k":1}',5,500,'[["content-type","application/json"]]','{"error":"boom"}',1,2,X'0d');
INSERT INTO requests VALUES(14,4,2,NULL,NULL,NULL,NULL,'POST','http://127.0.0.1:9/v1/responses',NULL,NULL,X'',X'5b312c325d',5,'[["content-type","application/json"],["x-custom","v"]]','{"k":1}',5,500,'[["content-type","application/json"]]','{"error":"boom"}',1,2,NULL);
INSERT INTO requests VALUES(15,4,3,NULL,NULL,NULL,'m2','POST','http://127.0.0.1:9/v1/responses',NULL,NULL,X'1d',NULL,54,'[["content-type","application/json"],["x-custom","v"]]','{"k":1}',5,500,'[["content-type","application/json"]]','{"error":"boom"}',1,2,X'0e000f');
CREATE TABLE session_items (
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    item_id     INTEGER NOT NULL,
    PRIMARY KEY (session_id, item_id)
) WITHOUT ROWID;
INSERT INTO session_items VALUES(1,1);
INSERT INTO session_items VALUES(1,2);
INSERT INTO session_items VALUES(1,3);
INSERT INTO session_items VALUES(1,4);
INSERT INTO session_items VALUES(1,5);
INSERT INTO session_items VALUES(1,6);
INSERT INTO session_items VALUES(1,7);
INSERT INTO session_items VALUES(2,8);
INSERT INTO session_items VALUES(2,9);
INSERT INTO session_items VALUES(3,10);
INSERT INTO session_items VALUES(3,11);
INSERT INTO session_items VALUES(3,12);
INSERT INTO session_items VALUES(3,13);
INSERT INTO session_items VALUES(3,14);
INSERT INTO session_items VALUES(3,15);
INSERT INTO session_items VALUES(3,16);
INSERT INTO session_items VALUES(3,17);
INSERT INTO session_items VALUES(3,18);
INSERT INTO session_items VALUES(3,19);
INSERT INTO session_items VALUES(3,20);
INSERT INTO session_items VALUES(3,21);
INSERT INTO session_items VALUES(3,22);
INSERT INTO session_items VALUES(3,23);
INSERT INTO session_items VALUES(3,24);
INSERT INTO session_items VALUES(3,25);
INSERT INTO session_items VALUES(3,26);
INSERT INTO session_items VALUES(3,27);
INSERT INTO session_items VALUES(3,28);
INSERT INTO session_items VALUES(4,29);
CREATE TABLE events (
    request_id   INTEGER NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    received_us  INTEGER NOT NULL,     -- from the start of the request
    event        TEXT,                 -- SSE `event:` name
    data         TEXT NOT NULL
);
INSERT INTO events VALUES(1,0,455000,'response.created','{"type":"response.created","sequence_number":0,"response":{"id":"resp_s1_01","status":"in_progress"}}');
INSERT INTO events VALUES(1,1,490000,'response.output_item.added','{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"fc_7d21e0","type":"function_call","status":"in_progress","name":"shell","call_id":"call_A1","arguments":""}}');
INSERT INTO events VALUES(1,2,525000,'response.function_call_arguments.delta','{"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_7d21e0","output_index":0,"delta":"{\"cmd\":\"find src -n"}');
INSERT INTO events VALUES(1,3,560000,'response.function_call_arguments.delta','{"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_7d21e0","output_index":0,"delta":"ame ''*.rs'' | wc -l\"}"}');
INSERT INTO events VALUES(1,4,595000,'response.output_item.done','{"type":"response.output_item.done","sequence_number":4,"output_index":0,"item":{"id":"fc_7d21e0","type":"function_call","status":"completed","name":"shell","call_id":"call_A1","arguments":"{\"cmd\":\"find src -name ''*.rs'' | wc -l\"}"}}');
INSERT INTO events VALUES(1,5,630000,'response.completed','{"type":"response.completed","sequence_number":5,"response":{"id":"resp_s1_01","status":"completed","end_turn":false,"usage":{"input_tokens":394,"input_tokens_details":{"cached_tokens":0},"output_tokens":41,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":435}}}');
INSERT INTO events VALUES(2,0,455000,'response.created','{"type":"response.created","sequence_number":0,"response":{"id":"resp_s1_02","status":"in_progress"}}');
INSERT INTO events VALUES(2,1,490000,'response.output_item.added','{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_9e0b11","type":"message","status":"in_progress","role":"assistant","content":[]}}');
INSERT INTO events VALUES(2,2,525000,'response.output_text.delta','{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_9e0b11","output_index":0,"content_index":0,"delta":"There are "}');
INSERT INTO events VALUES(2,3,560000,'response.output_text.delta','{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_9e0b11","output_index":0,"content_index":0,"delta":"14 Rust files "}');
INSERT INTO events VALUES(2,4,595000,'response.output_text.delta','{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_9e0b11","output_index":0,"content_index":0,"delta":"in src/."}');
INSERT INTO events VALUES(2,5,630000,'response.output_item.done','{"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{"id":"msg_9e0b11","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"There are 14 Rust files in src/."}]}}');
INSERT INTO events VALUES(2,6,665000,'response.completed','{"type":"response.completed","sequence_number":6,"response":{"id":"resp_s1_02","status":"completed","end_turn":true,"usage":{"input_tokens":541,"input_tokens_details":{"cached_tokens":0},"output_tokens":12,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":553}}}');
INSERT INTO events VALUES(3,0,455000,'response.created','{"type":"response.created","sequence_number":0,"response":{"id":"resp_s1_03","status":"in_progress"}}');
INSERT INTO events VALUES(3,1,490000,'response.output_item.added','{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"fc_80aa12","type":"function_call","status":"in_progress","name":"shell","call_id":"call_B2","arguments":""}}');
INSERT INTO events VALUES(3,2,525000,'response.function_call_arguments.delta','{"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_80aa12","output_index":0,"delta":"{\"cmd\":\"wc -c src/*.rs"}');
INSERT INTO events VALUES(3,3,560000,'response.function_call_arguments.delta','{"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_80aa12","output_index":0,"delta":" | sort -n | tail -2\"}"}');
INSERT INTO events VALUES(3,4,595000,'response.output_item.done','{"type":"response.output_item.done","sequence_number":4,"output_index":0,"item":{"id":"fc_80aa12","type":"function_call","status":"completed","name":"shell","call_id":"call_B2","arguments":"{\"cmd\":\"wc -c src/*.rs | sort -n | tail -2\"}"}}');
INSERT INTO events VALUES(3,5,630000,'response.completed','{"type":"response.completed","sequence_number":5,"response":{"id":"resp_s1_03","status":"completed","end_turn":false,"usage":{"input_tokens":1990,"input_tokens_details":{"cached_tokens":1920},"output_tokens":38,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":2028}}}');
INSERT INTO events VALUES(4,0,455000,'response.created','{"type":"response.created","sequence_number":0,"response":{"id":"resp_s3_01","status":"in_progress"}}');
INSERT INTO events VALUES(4,1,490000,'response.failed','{"type":"response.failed","sequence_number":1,"response":{"id":"resp_s3_01","status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached for requests per min (RPM). Please try again in 2.5s."}}}');
INSERT INTO events VALUES(6,0,455000,'response.created','{"type":"response.created","sequence_number":0,"response":{"id":"resp_s3_03","status":"in_progress"}}');
INSERT INTO events VALUES(6,1,490000,'response.output_item.added','{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_h3","type":"message","status":"in_progress","role":"assistant","content":[]}}');
INSERT INTO events VALUES(6,2,525000,'response.output_text.delta','{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_h3","output_index":0,"content_index":0,"delta":"Hello"}');
INSERT INTO events VALUES(6,3,560000,'response.output_text.delta','{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_h3","output_index":0,"content_index":0,"delta":" there, "}');
CREATE TABLE outcomes (
    request_id      INTEGER PRIMARY KEY REFERENCES requests(id) ON DELETE CASCADE,
    state           TEXT NOT NULL,     -- completed / failed / open
    response_id     TEXT,
    error_class     TEXT,
    error_message   TEXT,
    usage           TEXT,              -- JSON
    text            TEXT,
    server_model    TEXT,
    events          INTEGER NOT NULL,
    first_event_us  INTEGER,
    first_text_us   INTEGER,
    total_us        INTEGER
);
INSERT INTO outcomes VALUES(1,'completed','resp_s1_01',NULL,NULL,'{"input_tokens":394,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":41,"reasoning_output_tokens":0,"total_tokens":435}','',NULL,6,455000,NULL,630000);
INSERT INTO outcomes VALUES(2,'completed','resp_s1_02',NULL,NULL,'{"input_tokens":541,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":12,"reasoning_output_tokens":0,"total_tokens":553}','There are 14 Rust files in src/.',NULL,7,455000,525000,665000);
INSERT INTO outcomes VALUES(3,'completed','resp_s1_03',NULL,NULL,'{"input_tokens":1990,"cached_input_tokens":1920,"cache_write_input_tokens":0,"output_tokens":38,"reasoning_output_tokens":0,"total_tokens":2028}','',NULL,6,455000,NULL,630000);
INSERT INTO outcomes VALUES(4,'failed',NULL,'retryable','Rate limit reached for requests per min (RPM). Please try again in 2.5s.',NULL,'',NULL,2,455000,NULL,490000);
INSERT INTO outcomes VALUES(5,'failed',NULL,'http','HTTP 500',NULL,'',NULL,0,NULL,NULL,NULL);
INSERT INTO outcomes VALUES(6,'failed',NULL,'stream','stream closed before response.completed',NULL,'Hello there, ',NULL,4,455000,525000,560000);
INSERT INTO outcomes VALUES(7,'completed','resp_0000',NULL,NULL,'{"input_tokens":15359,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":16,"total_tokens":15399}','',NULL,0,NULL,NULL,3000);
INSERT INTO outcomes VALUES(8,'completed','resp_0001',NULL,NULL,'{"input_tokens":15505,"cached_input_tokens":14976,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":16,"total_tokens":15545}','',NULL,0,NULL,NULL,8000);
INSERT INTO outcomes VALUES(9,'completed','resp_0002',NULL,NULL,'{"input_tokens":15638,"cached_input_tokens":15104,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":16,"total_tokens":15678}','',NULL,0,NULL,NULL,3000);
INSERT INTO outcomes VALUES(10,'completed','resp_0003',NULL,NULL,'{"input_tokens":15785,"cached_input_tokens":15232,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":16,"total_tokens":15825}','',NULL,0,NULL,NULL,2000);
INSERT INTO outcomes VALUES(11,'completed','resp_0004',NULL,NULL,'{"input_tokens":15933,"cached_input_tokens":15360,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":16,"total_tokens":15973}','',NULL,0,NULL,NULL,3000);
CREATE TABLE pieces (
    id    INTEGER PRIMARY KEY,
    hash  BLOB NOT NULL UNIQUE,
    text  TEXT NOT NULL
);
INSERT INTO pieces VALUES(1,X'eaf48e747f5b9370908f7b07eaf5c202','{"model":"gpt-5.5","stream":true,"input":');
INSERT INTO pieces VALUES(2,X'4ac4172f71fb74fd9e37e820560633c8',',"tools":');
INSERT INTO pieces VALUES(3,X'9970bd17d0aa0a91ccf3e4405eaa224b','[{"type":"function","name":"shell","description":"Run a shell command and return its output.","strict":false,"parameters":{"type":"object","properties":{"cmd":{"type":"string","description":"The command line."}},"required":["cmd"],"additionalProperties":false}},{"type":"custom","name":"apply_patch","description":"Edit files with a patch. Freeform: do not wrap the patch in JSON.","format":{"type":"grammar","syntax":"lark","definition":"start: \"*** Begin Patch\" /(.|\\n)*/ \"*** End Patch\""}},{"type":"web_search","external_web_access":false}]');
INSERT INTO pieces VALUES(4,X'14dd1457fbdba6700956cb73656e083f',',"tool_choice":"auto","parallel_tool_calls":true,"reasoning":{"effort":"high","summary":"auto"},"store":false,"include":["reasoning.encrypted_content"],"prompt_cache_key":');
INSERT INTO pieces VALUES(5,X'c8258288f8be8c0c9915a1c0034f0921','"0196a2c2-0000-7000-8000-00000000abcd"');
INSERT INTO pieces VALUES(6,X'bb1474303cfdbfa27c94e17e3771cfc2',',"text":{"verbosity":"low"},"client_metadata":{"session_id":');
INSERT INTO pieces VALUES(7,X'23d3d7448577c51a2e4d18fa18a6bc60',',"turn_id":');
INSERT INTO pieces VALUES(8,X'e6d7e27e008761018f476bb42bdd0ec9','"0196a2c2-0004-7000-8000-000000000004"');
INSERT INTO pieces VALUES(9,X'565abf32fb9ced5600869d094fd0629e','}}');
INSERT INTO pieces VALUES(10,X'9e6e5b40041e606cab9226d1ad3d3919',',"tools":[],"tool_choice":"auto","parallel_tool_calls":true,"reasoning":{"effort":"medium"},"store":false,"include":["reasoning.encrypted_content"],"prompt_cache_key":');
INSERT INTO pieces VALUES(11,X'd42177b4e7374616b4ea6caddf814280','"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77"');
INSERT INTO pieces VALUES(12,X'6aab73e2e175bc37bc2f922aff989238',',"text":{"verbosity":"low"}}');
INSERT INTO pieces VALUES(13,X'7a3f5533983803234cb0f6e242219649','{"model":"m","input":[ 1, 2 ],"x":1.50e3}');
INSERT INTO pieces VALUES(14,X'836fdd2524c747959865422acbb5d4e6','{"input":');
INSERT INTO pieces VALUES(15,X'ffb67dea9bfe8b21ec6680b6b962bca8',',"model":"m2"}');
CREATE TABLE session_pieces (
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    piece_id    INTEGER NOT NULL,
    PRIMARY KEY (session_id, piece_id)
) WITHOUT ROWID;
INSERT INTO session_pieces VALUES(1,1);
INSERT INTO session_pieces VALUES(2,1);
INSERT INTO session_pieces VALUES(1,2);
INSERT INTO session_pieces VALUES(1,3);
INSERT INTO session_pieces VALUES(1,4);
INSERT INTO session_pieces VALUES(1,5);
INSERT INTO session_pieces VALUES(1,6);
INSERT INTO session_pieces VALUES(1,7);
INSERT INTO session_pieces VALUES(1,8);
INSERT INTO session_pieces VALUES(1,9);
INSERT INTO session_pieces VALUES(2,10);
INSERT INTO session_pieces VALUES(2,11);
INSERT INTO session_pieces VALUES(2,12);
INSERT INTO session_pieces VALUES(4,13);
INSERT INTO session_pieces VALUES(4,14);
INSERT INTO session_pieces VALUES(4,15);
CREATE INDEX sessions_by_created ON sessions(created_us DESC, id DESC);
CREATE INDEX session_items_by_item ON session_items(item_id);
CREATE UNIQUE INDEX events_by_request ON events(request_id, seq);
CREATE INDEX sessions_by_replay_of ON sessions(replay_of) WHERE replay_of IS NOT NULL;
CREATE INDEX session_pieces_by_piece ON session_pieces(piece_id);
COMMIT;
