//! The layout of the window's panes, persisted with the settings: each pane's remembered size,
//! which are collapsed (to their header) and which one is maximised to the window. The panes
//! themselves are drawn by `ui/panes.rs`; this is only the state and its [`PaneCommand`]s.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// One pane of the window: a side or bottom panel, or a central area that can be maximised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PaneId {
    /// The workbench's left sidebar (sessions, examples, providers).
    Sidebar,
    /// The Prompt form.
    Form,
    /// The compiled columns (the workbench's central area: maximisable, not collapsible).
    Columns,
    /// The send timeline under the workbench.
    SendTimeline,
    /// The Record panel (the recording proxy), at the right.
    Record,
    /// The Sessions view's session list.
    SessionList,
    /// The open session's request table.
    RequestTable,
    /// The cache-prefix / Compare area under the table (maximisable, not collapsible).
    Analysis,
    /// The replay timeline under the Sessions view.
    ReplayTimeline,
    /// The Sessions view's request inspector, at the right of the table.
    Inspector,
    /// The Traffic view's live request list (its central area: maximisable, not collapsible).
    Traffic,
    /// The Traffic view's inspector of the selected request, under the list.
    TrafficInspector,
}

impl PaneId {
    /// The panes of the workbench, in key order (Alt+1 … Alt+5).
    pub const WORKBENCH: [PaneId; 5] = [
        Self::Sidebar,
        Self::Form,
        Self::Columns,
        Self::SendTimeline,
        Self::Record,
    ];

    /// The panes of the Sessions view, in key order (Alt+1 … Alt+6: the Record panel keeps
    /// Alt+5, as in the workbench, and the inspector, added later, is Alt+6).
    pub const SESSIONS: [PaneId; 6] = [
        Self::SessionList,
        Self::RequestTable,
        Self::Analysis,
        Self::ReplayTimeline,
        Self::Record,
        Self::Inspector,
    ];

    /// The panes of the Traffic view, in key order (Alt+1 … Alt+3).
    pub const TRAFFIC: [PaneId; 3] = [Self::Traffic, Self::TrafficInspector, Self::Record];

    /// The name in its header.
    pub fn title(self) -> &'static str {
        match self {
            Self::Sidebar => "Sidebar",
            Self::Form => "Prompt",
            Self::Columns => "Compiled",
            Self::SendTimeline => "Timeline",
            Self::Record => "Record",
            Self::SessionList => "Sessions",
            Self::RequestTable => "Requests",
            Self::Analysis => "Analysis",
            Self::ReplayTimeline => "Replay",
            Self::Inspector => "Inspector",
            Self::Traffic => "Traffic",
            Self::TrafficInspector => "Request",
        }
    }

    /// A central area fills what the panels leave: it can be maximised, not collapsed.
    pub fn is_central(self) -> bool {
        matches!(self, Self::Columns | Self::Analysis | Self::Traffic)
    }
}

/// What a pane header or a key asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PaneCommand {
    /// Collapse the pane to its header, or restore it.
    ToggleCollapsed(PaneId),
    /// Maximise the pane to the window, or restore the layout.
    ToggleMaximised(PaneId),
    /// The user resized the pane to this size (points, along its axis).
    Resized(PaneId, f32),
}

/// Sizes, collapsed panes and the maximised pane (persisted in [`super::Settings`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PaneLayout {
    /// The size each resized pane was left at.
    pub sizes: BTreeMap<PaneId, f32>,
    /// Panes shown as their header only.
    pub collapsed: BTreeSet<PaneId>,
    /// The pane that fills the window, if any.
    pub maximised: Option<PaneId>,
}

impl PaneLayout {
    /// Applies a pane command.
    pub fn apply(&mut self, command: PaneCommand) {
        match command {
            PaneCommand::ToggleCollapsed(id) => {
                if id.is_central() {
                    return;
                }
                if self.maximised == Some(id) {
                    self.maximised = None;
                }
                if !self.collapsed.remove(&id) {
                    self.collapsed.insert(id);
                }
            }
            PaneCommand::ToggleMaximised(id) => {
                if self.maximised == Some(id) {
                    self.maximised = None;
                } else {
                    self.maximised = Some(id);
                    self.collapsed.remove(&id);
                }
            }
            PaneCommand::Resized(id, size) => {
                if size.is_finite() && size > 0.0 {
                    self.sizes.insert(id, size);
                }
            }
        }
    }

    /// True when `id` shows only its header.
    pub fn is_collapsed(&self, id: PaneId) -> bool {
        self.collapsed.contains(&id)
    }

    /// The remembered size of `id`.
    pub fn size(&self, id: PaneId) -> Option<f32> {
        self.sizes.get(&id).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapse_maximise_and_back() {
        let mut layout = PaneLayout::default();
        layout.apply(PaneCommand::ToggleCollapsed(PaneId::SendTimeline));
        assert_eq!(
            layout.collapsed,
            BTreeSet::from([PaneId::SendTimeline]),
            "collapsed"
        );
        layout.apply(PaneCommand::ToggleMaximised(PaneId::SendTimeline));
        assert_eq!(
            (layout.maximised, layout.collapsed.len()),
            (Some(PaneId::SendTimeline), 0)
        );
        layout.apply(PaneCommand::ToggleMaximised(PaneId::SendTimeline));
        layout.apply(PaneCommand::ToggleCollapsed(PaneId::Columns));
        layout.apply(PaneCommand::Resized(PaneId::Form, 400.0));
        layout.apply(PaneCommand::Resized(PaneId::Form, f32::NAN));
        assert_eq!(
            layout,
            PaneLayout {
                sizes: BTreeMap::from([(PaneId::Form, 400.0)]),
                collapsed: BTreeSet::new(),
                maximised: None,
            }
        );
    }
}
