//! The page model every report view fills: sections of tables and groups
//! of figures, the environments compared, the page around them. A leaf the
//! page's sections, `compare` and the HTML renderer all use.

use serde::Serialize;

use super::charts::Figure;
use crate::output::table::Table;

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Group {
    pub(crate) heading: String,
    /// Small multiples, laid out three a row.
    pub(crate) small: bool,
    pub(crate) figures: Vec<Figure>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Section {
    pub(crate) id: String,
    pub(crate) heading: String,
    pub(crate) intro: String,
    pub(crate) tables_before: Vec<Table>,
    pub(crate) groups: Vec<Group>,
    pub(crate) tables: Vec<Table>,
}

impl Section {
    pub(crate) fn new(id: &str, heading: &str, intro: &str) -> Self {
        Self {
            id: id.into(),
            heading: heading.into(),
            intro: intro.into(),
            tables_before: Vec::new(),
            groups: Vec::new(),
            tables: Vec::new(),
        }
    }

    pub(crate) fn figures(mut self, figs: Vec<Figure>) -> Self {
        if !figs.is_empty() {
            self.groups.push(Group {
                heading: String::new(),
                small: false,
                figures: figs,
            });
        }
        self
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Env {
    pub(crate) label: String,
    pub(crate) table: Table,
    pub(crate) spec: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Page {
    pub(crate) title: String,
    pub(crate) subtitle: Vec<String>,
    pub(crate) version: String,
    pub(crate) warnings: Vec<String>,
    pub(crate) sections: Vec<Section>,
    pub(crate) envs: Vec<Env>,
}
