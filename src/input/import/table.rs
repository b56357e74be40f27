//! The option table every importer reads through: a row per option of the
//! tool (its name, the tool's other names for it, the value it takes, and
//! its rule), the verdict a rule gives, and the one driver that reads an
//! option by its row. An importer is its reader (the tool's text into
//! `Opt`s), its rows, and what its rows' functions build; an option no row
//! names is refused by name. A leaf: it uses none of its siblings.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::{How, Mapping, Notes, option_like};

/// One option as the source gave it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Opt {
    /// Where it is: "job.fio line 12", "argument 3".
    pub(crate) at: String,
    /// The name its row is found by (`rw`, `xfersize`, diskspd's `b`).
    pub(crate) key: String,
    /// Its value; None when the option is given bare (fio's `time_based`).
    pub(crate) value: Option<String>,
    /// As the user wrote it, for messages and comments (`-b4k`).
    written: String,
}

impl Opt {
    /// `key=value` (or `key` alone), as fio and vdbench write options.
    pub(crate) fn new(at: &str, key: &str, value: Option<&str>) -> Self {
        let written = match value {
            Some(v) => format!("{key}={v}"),
            None => key.to_string(),
        };
        Self {
            at: at.to_string(),
            key: key.to_string(),
            value: value.map(str::to_string),
            written,
        }
    }

    /// An option written another way than `key=value` (diskspd's `-b4k`).
    pub(crate) fn written_as(at: &str, key: &str, value: &str, written: &str) -> Self {
        Self {
            at: at.to_string(),
            key: key.to_string(),
            value: Some(value.to_string()),
            written: written.to_string(),
        }
    }

    /// The option as written.
    pub(crate) fn text(&self) -> String {
        self.written.clone()
    }

    /// The value, empty when none was given.
    pub(crate) fn val(&self) -> &str {
        self.value.as_deref().unwrap_or("")
    }

    /// How this option was mapped: exactly, or with a note printed.
    pub(crate) fn mapping(&self, how: impl Into<String>, exact: bool) -> Mapping {
        let how = how.into();
        Mapping {
            at: self.at.clone(),
            option: self.written.clone(),
            how: if exact {
                How::Exact(how)
            } else {
                How::Note(how)
            },
        }
    }

    /// Refuses this option, saying why.
    pub(crate) fn refuse(&self, notes: &mut Notes, why: impl Into<String>) {
        notes.refuse(&self.at, &self.written, why);
    }
}

/// What volbench makes of one option.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Verdict {
    /// The same meaning in volbench (said in the suite's comment).
    Exact(&'static str),
    /// Accepted, and the user is told how volbench differs.
    Note(&'static str),
    /// Refused: "not supported yet (why)", before any I/O.
    Refuse(&'static str),
}

/// What a row does with its option.
pub(crate) enum Rule<S> {
    /// Read into the import being built (`S`) by its function, which maps
    /// it exactly, with a note, or refuses its value.
    Map(fn(&Opt, &mut S, &mut Notes)),
    /// Changes nothing volbench runs; its value decides the verdict.
    Judge(fn(&Opt) -> Verdict),
    /// The same verdict whatever its value.
    Always(Verdict),
}

/// One option of a tool.
pub(crate) struct Row<S> {
    pub(crate) name: &'static str,
    /// The tool's other names for it (fio's `timeout` for `runtime`).
    pub(crate) aliases: &'static [&'static str],
    /// The value it takes, as the tool's usage writes it (`<size>`).
    pub(crate) value: &'static str,
    pub(crate) rule: Rule<S>,
}

/// A row with no other name, its value left to the guide.
pub(crate) const fn row<S>(name: &'static str, rule: Rule<S>) -> Row<S> {
    Row {
        name,
        aliases: &[],
        value: "",
        rule,
    }
}

/// A row the tool also reads by other names.
pub(crate) const fn alias<S>(
    name: &'static str,
    aliases: &'static [&'static str],
    rule: Rule<S>,
) -> Row<S> {
    Row {
        name,
        aliases,
        value: "",
        rule,
    }
}

/// A row whose value the tool's usage shows (diskspd's switches).
pub(crate) const fn takes<S>(name: &'static str, value: &'static str, rule: Rule<S>) -> Row<S> {
    Row {
        name,
        aliases: &[],
        value,
        rule,
    }
}

/// The kind of rule a row has, as the import guide's tables name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Map,
    Judge,
    Exact,
    Note,
    Refuse,
}

#[cfg(test)]
impl Kind {
    /// The word in the guide's "rule" column.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Kind::Map => "map",
            Kind::Judge => "by value",
            Kind::Exact => "exact",
            Kind::Note => "note",
            Kind::Refuse => "refuse",
        }
    }
}

impl<S> Row<S> {
    pub(crate) fn kind(&self) -> Kind {
        match self.rule {
            Rule::Map(_) => Kind::Map,
            Rule::Judge(_) => Kind::Judge,
            Rule::Always(Verdict::Exact(_)) => Kind::Exact,
            Rule::Always(Verdict::Note(_)) => Kind::Note,
            Rule::Always(Verdict::Refuse(_)) => Kind::Refuse,
        }
    }

    /// Whether `key` is this row's option, by its name or another.
    pub(crate) fn names(&self, key: &str) -> bool {
        self.name == key || self.aliases.contains(&key)
    }
}

/// A row as the import guide's tables show it, whatever the import builds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Doc {
    pub(crate) name: &'static str,
    pub(crate) aliases: &'static [&'static str],
    pub(crate) value: &'static str,
    pub(crate) kind: Kind,
}

/// The rows of a table as the guide shows them.
pub(crate) fn docs<S>(rows: &[Row<S>]) -> Vec<Doc> {
    rows.iter()
        .map(|r| Doc {
            name: r.name,
            aliases: r.aliases,
            value: r.value,
            kind: r.kind(),
        })
        .collect()
}

/// Whatever an import builds that keeps how each option was mapped.
pub(crate) trait Said {
    fn said(&mut self) -> &mut Vec<Mapping>;
}

/// The row naming `key`, by its name or another.
pub(crate) fn find<'t, S>(rows: &'t [Row<S>], key: &str) -> Option<&'t Row<S>> {
    rows.iter().find(|r| r.names(key))
}

/// Reads `o` by its row in `rows`; an option no row names is refused by
/// name, as an unknown `what` ("fio option", "wd parameter").
pub(crate) fn read<S: Said>(rows: &[Row<S>], o: &Opt, s: &mut S, notes: &mut Notes, what: &str) {
    match find(rows, &o.key) {
        Some(row) => apply(row, o, s, notes),
        None => unknown(o, notes, what),
    }
}

/// Reads `o` by `row`.
pub(crate) fn apply<S: Said>(row: &Row<S>, o: &Opt, s: &mut S, notes: &mut Notes) {
    match &row.rule {
        Rule::Map(f) => f(o, s, notes),
        Rule::Judge(f) => verdict(f(o), o, s, notes),
        Rule::Always(v) => verdict(*v, o, s, notes),
    }
}

/// Records a verdict on `o`: mapped (exactly or noted) or refused.
pub(crate) fn verdict<S: Said>(v: Verdict, o: &Opt, s: &mut S, notes: &mut Notes) {
    match v {
        Verdict::Exact(how) => s.said().push(o.mapping(how, true)),
        Verdict::Note(how) => s.said().push(o.mapping(how, false)),
        Verdict::Refuse(why) => notes.unsupported(&o.at, &o.text(), why),
    }
}

/// Refuses an option no row names. Its name is shown only when it could
/// be an option's name, and its value never: a line of a file that is no
/// job file at all (`include /etc/shadow`) never reaches the terminal.
pub(crate) fn unknown(o: &Opt, notes: &mut Notes, what: &str) {
    if option_like(&o.key) {
        notes.refuse(
            &o.at,
            &o.key,
            format!("not supported yet (no volbench equivalent of this {what})"),
        );
    } else {
        notes.refuse(
            &o.at,
            "this line",
            format!("not a {what} (its text is not shown: is this the tool's file?)"),
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Got {
        said: Vec<Mapping>,
        depth: u64,
    }

    impl Said for Got {
        fn said(&mut self) -> &mut Vec<Mapping> {
            &mut self.said
        }
    }

    fn depth(o: &Opt, g: &mut Got, notes: &mut Notes) {
        match o.val().parse() {
            Ok(d) => g.depth = d,
            Err(_) => o.refuse(notes, "a whole number"),
        }
    }

    const ROWS: &[Row<Got>] = &[
        alias("depth", &["qd"], Rule::Map(depth)),
        row("pin", Rule::Always(Verdict::Note("not pinned"))),
        row("report", Rule::Always(Verdict::Exact("reported"))),
        row("zero", Rule::Always(Verdict::Refuse("writing zeros"))),
        row(
            "loops",
            Rule::Judge(|o| match o.val() {
                "1" => Verdict::Exact("one pass"),
                _ => Verdict::Refuse("several passes"),
            }),
        ),
    ];

    fn read_all(opts: &[(&str, Option<&str>)]) -> (Got, Notes) {
        let (mut g, mut notes) = (Got::default(), Notes::default());
        for (i, (k, v)) in opts.iter().enumerate() {
            let o = Opt::new(&format!("f line {}", i + 1), k, *v);
            read(ROWS, &o, &mut g, &mut notes, "test option");
        }
        (g, notes)
    }

    #[test]
    fn each_rule_gives_its_verdict_and_aliases_find_their_row() {
        let (g, notes) = read_all(&[
            ("qd", Some("8")),
            ("pin", Some("0-3")),
            ("report", None),
            ("loops", Some("1")),
        ]);
        assert_eq!(g.depth, 8);
        assert!(notes.refused.is_empty());
        let hows: Vec<&How> = g.said.iter().map(|m| &m.how).collect();
        assert_eq!(
            hows,
            [
                &How::Note("not pinned".into()),
                &How::Exact("reported".into()),
                &How::Exact("one pass".into())
            ]
        );
        assert_eq!(g.said[0].option, "pin=0-3");
        let (_, notes) = read_all(&[("zero", None), ("loops", Some("3")), ("depth", Some("x"))]);
        let e = notes.check().unwrap_err().to_string();
        assert!(
            e.contains("f line 1: zero: not supported yet (writing zeros)"),
            "{e}"
        );
        assert!(
            e.contains("f line 2: loops=3: not supported yet (several passes)"),
            "{e}"
        );
        assert!(e.contains("f line 3: depth=x: a whole number"), "{e}");
    }

    #[test]
    fn an_unknown_option_is_refused_by_name_without_its_value_or_a_foreign_line() {
        let (_, notes) = read_all(&[
            ("password", Some("hunter2")),
            ("root:$6$salt$SECRET:19000:0:99999:7:::", None),
        ]);
        let e = notes.check().unwrap_err().to_string();
        assert!(e.contains("f line 1: password: not supported yet"), "{e}");
        assert!(e.contains("f line 2: this line: not a test option"), "{e}");
        assert!(!e.contains("hunter2") && !e.contains("SECRET"), "{e}");
    }

    #[test]
    fn rows_say_their_kind_in_the_guides_words() {
        let kinds: Vec<&str> = ROWS.iter().map(|r| r.kind().word()).collect();
        assert_eq!(kinds, ["map", "note", "exact", "refuse", "by value"]);
    }
}
