//! `Provider`: where a request goes and how Codex treats it — `is_openai` by display name and
//! Azure detection by name or URL, exactly as WIRE_SPEC §9.

use serde::{Deserialize, Serialize};

/// The three provider behaviours a compiled request can differ by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// The built-in OpenAI provider (display name `OpenAI`).
    Openai,
    /// An Azure Responses endpoint.
    Azure,
    /// Any other Responses-compatible endpoint.
    Compatible,
}

impl ProviderKind {
    /// All kinds, in display order.
    pub const ALL: [ProviderKind; 3] = [Self::Openai, Self::Azure, Self::Compatible];

    /// The id used on the command line and in Prompt files.
    pub fn id(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Azure => "azure",
            Self::Compatible => "compatible",
        }
    }

    /// Parses `openai`, `azure` or `compatible`.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.id() == text)
    }
}

/// A configured provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provider {
    /// Display name; `OpenAI` exactly makes it the OpenAI provider.
    pub name: String,
    /// Base URL; the request goes to `{base_url}/responses`.
    pub base_url: String,
    /// Environment variable holding the API key (the key itself is never stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_key: Option<String>,
    /// Static headers added to every request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// Query parameters appended to the URL (`?k=v&…`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query_params: Vec<(String, String)>,
    /// Headers whose values come from environment variables (name → variable), read at send
    /// time and never stored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_headers: Vec<(String, String)>,
}

/// URL fragments that mark an Azure Responses endpoint (§9).
const AZURE_URL_MARKERS: [&str; 6] = [
    "openai.azure.",
    "cognitiveservices.azure.",
    "aoai.azure.",
    "azure-api.",
    "azurefd.",
    "windows.net/openai",
];

impl Provider {
    /// The preset for a kind: OpenAI's public API, an Azure resource, or a local compatible server.
    pub fn preset(kind: ProviderKind) -> Self {
        match kind {
            ProviderKind::Openai => Self {
                name: "OpenAI".to_string(),
                base_url: "https://api.openai.com/v1".to_string(),
                env_key: Some("OPENAI_API_KEY".to_string()),
                headers: Vec::new(),
                query_params: Vec::new(),
                env_headers: Vec::new(),
            },
            ProviderKind::Azure => Self {
                name: "Azure".to_string(),
                base_url: "https://YOUR-RESOURCE.openai.azure.com/openai".to_string(),
                env_key: Some("AZURE_OPENAI_API_KEY".to_string()),
                headers: Vec::new(),
                query_params: Vec::new(),
                env_headers: Vec::new(),
            },
            ProviderKind::Compatible => Self {
                name: "Compatible".to_string(),
                base_url: "http://localhost:11434/v1".to_string(),
                env_key: None,
                headers: Vec::new(),
                query_params: Vec::new(),
                env_headers: Vec::new(),
            },
        }
    }

    /// True iff the display name is exactly `OpenAI`.
    pub fn is_openai(&self) -> bool {
        self.name == "OpenAI"
    }

    /// True when the name is `azure` (any case) or the base URL has an Azure marker.
    pub fn is_azure_responses_endpoint(&self) -> bool {
        if self.name.eq_ignore_ascii_case("azure") {
            return true;
        }
        let url = self.base_url.to_ascii_lowercase();
        AZURE_URL_MARKERS.iter().any(|m| url.contains(m))
    }

    /// The behaviour class of this provider.
    pub fn kind(&self) -> ProviderKind {
        if self.is_azure_responses_endpoint() {
            ProviderKind::Azure
        } else if self.is_openai() {
            ProviderKind::Openai
        } else {
            ProviderKind::Compatible
        }
    }

    /// `{base_url}/responses` plus query parameters.
    pub fn responses_url(&self) -> String {
        self.url_for("responses")
    }

    /// `{base_url}/responses/compact` plus query parameters (the unary compaction request).
    pub fn compact_url(&self) -> String {
        self.url_for("responses/compact")
    }

    fn url_for(&self, path: &str) -> String {
        let mut url = format!("{}/{path}", self.base_url.trim_end_matches('/'));
        for (i, (k, v)) in self.query_params.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(k);
            url.push('=');
            url.push_str(v);
        }
        url
    }
}
