//! What a user pastes to point a client at the recording proxy: for the address the proxy
//! listens on, the Codex `config.toml` provider entry (HTTP and WebSocket), the same as a
//! one-line `codex -c …`, the `OPENAI_BASE_URL` the SDKs read, and a curl line. The Record
//! panel shows them with a Copy button each and `promptwire record` prints them when it starts,
//! so both say exactly the same thing.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The provider name the snippets give promptwire in Codex's config.
pub const PROVIDER: &str = "promptwire";

/// One snippet of setup text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupSnippet {
    /// A stable key (`codex_config`, `codex_cli`, `sdk_env`, `curl`), for `--json` and tests.
    pub key: &'static str,
    /// What it is for, as a heading (`Codex: ~/.codex/config.toml`).
    pub title: &'static str,
    /// The text to paste.
    pub text: String,
}

/// The base URL a client on this machine uses for a proxy listening on `addr`: an unspecified
/// address (`0.0.0.0`, `[::]`) is reached through loopback.
pub fn client_base_url(addr: SocketAddr) -> String {
    let ip = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("http://{}/v1", SocketAddr::new(ip, addr.port()))
}

/// The setup snippets for a proxy listening on `addr`, in the order they are shown.
pub fn setup_snippets(addr: SocketAddr) -> Vec<SetupSnippet> {
    let base = client_base_url(addr);
    let config = format!(
        "model_provider = \"{PROVIDER}\"\n\
         \n\
         [model_providers.{PROVIDER}]\n\
         name = \"OpenAI through promptwire\"\n\
         base_url = \"{base}\"\n\
         wire_api = \"responses\"\n\
         env_key = \"OPENAI_API_KEY\"\n\
         # Codex then uses its WebSocket transport (recorded too); delete for HTTP only.\n\
         supports_websockets = true"
    );
    let cli = format!(
        "codex -c model_provider={PROVIDER} -c 'model_providers.{PROVIDER}={{ name = \"OpenAI through promptwire\", base_url = \"{base}\", wire_api = \"responses\", env_key = \"OPENAI_API_KEY\", supports_websockets = true }}'"
    );
    let curl = format!(
        "curl -sN {base}/responses -H \"Authorization: Bearer $OPENAI_API_KEY\" -H 'Content-Type: application/json' -d '{{\"model\":\"gpt-5.5\",\"input\":\"Say hello\",\"stream\":true}}'"
    );
    vec![
        SetupSnippet {
            key: "codex_config",
            title: "Codex: add to ~/.codex/config.toml",
            text: config,
        },
        SetupSnippet {
            key: "codex_cli",
            title: "Codex: or for one run",
            text: cli,
        },
        SetupSnippet {
            key: "sdk_env",
            title: "OpenAI SDKs (Python, TypeScript): in the environment",
            text: format!("OPENAI_BASE_URL={base}"),
        },
        SetupSnippet {
            key: "curl",
            title: "curl",
            text: curl,
        },
    ]
}

/// The snippets as lines of plain text (`# title` then the text, a blank line between), as
/// `promptwire record` prints them.
pub fn setup_text(addr: SocketAddr) -> String {
    setup_snippets(addr)
        .iter()
        .map(|s| format!("# {}\n{}", s.title, s.text))
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_snippets_name_the_listening_address() {
        let addr: SocketAddr = "127.0.0.1:8787".parse().expect("addr");
        let shown: Vec<(&str, String)> = setup_snippets(addr)
            .into_iter()
            .map(|s| (s.key, s.text))
            .collect();
        assert_eq!(
            shown,
            vec![
                (
                    "codex_config",
                    "model_provider = \"promptwire\"\n\n[model_providers.promptwire]\nname = \"OpenAI through promptwire\"\nbase_url = \"http://127.0.0.1:8787/v1\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n# Codex then uses its WebSocket transport (recorded too); delete for HTTP only.\nsupports_websockets = true".to_string()
                ),
                (
                    "codex_cli",
                    "codex -c model_provider=promptwire -c 'model_providers.promptwire={ name = \"OpenAI through promptwire\", base_url = \"http://127.0.0.1:8787/v1\", wire_api = \"responses\", env_key = \"OPENAI_API_KEY\", supports_websockets = true }'".to_string()
                ),
                ("sdk_env", "OPENAI_BASE_URL=http://127.0.0.1:8787/v1".to_string()),
                (
                    "curl",
                    "curl -sN http://127.0.0.1:8787/v1/responses -H \"Authorization: Bearer $OPENAI_API_KEY\" -H 'Content-Type: application/json' -d '{\"model\":\"gpt-5.5\",\"input\":\"Say hello\",\"stream\":true}'".to_string()
                ),
            ]
        );
    }

    #[test]
    fn an_unspecified_address_is_reached_through_loopback() {
        let urls: Vec<String> = [
            "0.0.0.0:9000",
            "[::]:9001",
            "[::1]:9002",
            "192.168.1.2:9003",
        ]
        .into_iter()
        .map(|a| client_base_url(a.parse().expect("addr")))
        .collect();
        assert_eq!(
            urls,
            vec![
                "http://127.0.0.1:9000/v1",
                "http://[::1]:9001/v1",
                "http://[::1]:9002/v1",
                "http://192.168.1.2:9003/v1",
            ]
        );
    }

    #[test]
    fn the_config_snippet_is_valid_toml_with_the_provider() {
        let addr: SocketAddr = "127.0.0.1:1234".parse().expect("addr");
        let config = &setup_snippets(addr)[0].text;
        let value: toml::Value = toml::from_str(config).expect("toml");
        let provider = &value["model_providers"]["promptwire"];
        assert_eq!(
            (
                value["model_provider"].as_str(),
                provider["base_url"].as_str(),
                provider["wire_api"].as_str(),
                provider["env_key"].as_str(),
                provider["supports_websockets"].as_bool(),
            ),
            (
                Some("promptwire"),
                Some("http://127.0.0.1:1234/v1"),
                Some("responses"),
                Some("OPENAI_API_KEY"),
                Some(true)
            )
        );
    }

    #[test]
    fn the_one_line_form_sets_the_same_provider_as_the_config_entry() {
        let addr: SocketAddr = "127.0.0.1:1234".parse().expect("addr");
        let snippets = setup_snippets(addr);
        let config: toml::Value = toml::from_str(&snippets[0].text).expect("toml");
        // `codex -c KEY=VALUE` parses VALUE as TOML: the quoted inline table after `=`.
        let value = snippets[1]
            .text
            .split_once("'model_providers.promptwire=")
            .and_then(|(_, rest)| rest.strip_suffix('\''))
            .expect("the -c value");
        let inline: toml::Value = toml::from_str(&format!("v = {value}")).expect("toml");
        assert_eq!(inline["v"], config["model_providers"]["promptwire"]);
    }
}
