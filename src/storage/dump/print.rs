//! Printing a dump: the `Sink` entries are written to as they are read,
//! and its formats (YAML, JSON, one key per line, kubectl-style table).

use std::io::{self, Write};

use super::{Entry, PAGE_SIZE};

/// Where entries go, as they are read.
pub trait Sink {
    /// Called once, before any entry, with the revision read at.
    fn begin(&mut self, revision: i64) -> io::Result<()>;
    fn entry(&mut self, e: &Entry) -> io::Result<()>;
    /// Keys read so far, and how many the ranges started so far hold (0
    /// when no total was asked for).
    fn progress(&mut self, _read: u64, _total: u64) {}
    fn end(&mut self) -> io::Result<()>;
}
/// Indents every line but the first by `pad`.
fn indent_rest(text: &str, pad: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 || l.is_empty() {
                l.to_string()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One YAML document, `revision` and `items`, written item by item.
pub struct YamlSink<W: Write> {
    out: W,
    items: u64,
}

impl<W: Write> YamlSink<W> {
    pub fn new(out: W) -> Self {
        YamlSink { out, items: 0 }
    }
}

impl<W: Write> Sink for YamlSink<W> {
    fn begin(&mut self, revision: i64) -> io::Result<()> {
        writeln!(self.out, "revision: {revision}")
    }

    fn entry(&mut self, e: &Entry) -> io::Result<()> {
        if self.items == 0 {
            writeln!(self.out, "items:")?;
        }
        self.items += 1;
        let text = serde_saphyr::to_string(e).map_err(io::Error::other)?;
        let text = text.trim_start_matches("---\n").trim_end();
        writeln!(self.out, "- {}", indent_rest(text, "  "))
    }

    fn end(&mut self) -> io::Result<()> {
        if self.items == 0 {
            writeln!(self.out, "items: []")?;
        }
        self.out.flush()
    }
}

/// One JSON document, `{"revision": N, "items": [...]}`, written item by item.
pub struct JsonSink<W: Write> {
    out: W,
    items: u64,
}

impl<W: Write> JsonSink<W> {
    pub fn new(out: W) -> Self {
        JsonSink { out, items: 0 }
    }
}

impl<W: Write> Sink for JsonSink<W> {
    fn begin(&mut self, revision: i64) -> io::Result<()> {
        write!(self.out, "{{\n  \"revision\": {revision},\n  \"items\": [")
    }

    fn entry(&mut self, e: &Entry) -> io::Result<()> {
        let sep = if self.items == 0 { "" } else { "," };
        self.items += 1;
        let text = serde_json::to_string_pretty(e).map_err(io::Error::other)?;
        write!(self.out, "{sep}\n    {}", indent_rest(&text, "    "))
    }

    fn end(&mut self) -> io::Result<()> {
        if self.items == 0 {
            writeln!(self.out, "]\n}}")?;
        } else {
            writeln!(self.out, "\n  ]\n}}")?;
        }
        self.out.flush()
    }
}

/// One key per line.
pub struct KeysSink<W: Write> {
    out: W,
}

impl<W: Write> KeysSink<W> {
    pub fn new(out: W) -> Self {
        KeysSink { out }
    }
}

impl<W: Write> Sink for KeysSink<W> {
    fn begin(&mut self, _revision: i64) -> io::Result<()> {
        Ok(())
    }

    fn entry(&mut self, e: &Entry) -> io::Result<()> {
        writeln!(self.out, "{}", e.key)
    }

    fn end(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

const TABLE_HEADER: [&str; 8] = [
    "KEY",
    "RESOURCE",
    "NAMESPACE",
    "NAME",
    "CREATE-REVISION",
    "MOD-REVISION",
    "VERSION",
    "SIZE",
];

/// Aligned columns as kubectl prints them, a page at a time (columns
/// only ever widen, so later pages stay aligned with earlier ones).
pub struct TableSink<W: Write> {
    out: W,
    rows: Vec<[String; 8]>,
    widths: [usize; 8],
    header_done: bool,
}

impl<W: Write> TableSink<W> {
    pub fn new(out: W) -> Self {
        TableSink {
            out,
            rows: Vec::new(),
            widths: TABLE_HEADER.map(str::len),
            header_done: false,
        }
    }

    fn flush_rows(&mut self) -> io::Result<()> {
        for row in &self.rows {
            for (w, cell) in self.widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut rows = std::mem::take(&mut self.rows);
        if !self.header_done {
            rows.insert(0, TABLE_HEADER.map(String::from));
            self.header_done = true;
        }
        for row in rows {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(&format!("{cell:<w$}   ", w = self.widths[i]));
                }
            }
            writeln!(self.out, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

impl<W: Write> Sink for TableSink<W> {
    fn begin(&mut self, _revision: i64) -> io::Result<()> {
        Ok(())
    }

    fn entry(&mut self, e: &Entry) -> io::Result<()> {
        self.rows.push([
            e.key.clone(),
            e.resource_name(),
            e.namespace.clone(),
            e.name.clone(),
            e.create_revision.to_string(),
            e.mod_revision.to_string(),
            e.version.to_string(),
            e.size.to_string(),
        ]);
        if self.rows.len() >= PAGE_SIZE as usize {
            self.flush_rows()?;
        }
        Ok(())
    }

    fn end(&mut self) -> io::Result<()> {
        if !self.rows.is_empty() || !self.header_done {
            if self.rows.is_empty() {
                // kubectl's word for an empty list, on stderr.
                eprintln!("No keys found.");
                return self.out.flush();
            }
            self.flush_rows()?;
        }
        self.out.flush()
    }
}
