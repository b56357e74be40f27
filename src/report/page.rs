//! The page model every report view fills: sections of tables and groups
//! of figures, the environments compared, the page around them. A leaf the
//! page's sections, `compare` and the HTML renderer all use.

use serde::Serialize;

use super::charts::Figure;
use crate::output::table::Table;

#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub heading: String,
    /// Small multiples, laid out three a row.
    pub small: bool,
    pub figures: Vec<Figure>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub id: String,
    pub heading: String,
    pub intro: String,
    pub tables_before: Vec<Table>,
    pub groups: Vec<Group>,
    pub tables: Vec<Table>,
}

impl Section {
    pub fn new(id: &str, heading: &str, intro: &str) -> Self {
        Self {
            id: id.into(),
            heading: heading.into(),
            intro: intro.into(),
            tables_before: Vec::new(),
            groups: Vec::new(),
            tables: Vec::new(),
        }
    }

    pub fn figures(mut self, figs: Vec<Figure>) -> Self {
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
pub struct Env {
    pub label: String,
    pub table: Table,
    pub spec: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Page {
    pub title: String,
    pub subtitle: Vec<String>,
    pub version: String,
    pub warnings: Vec<String>,
    pub sections: Vec<Section>,
    pub envs: Vec<Env>,
}
