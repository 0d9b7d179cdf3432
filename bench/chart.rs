//! The results as an SVG chart (issue 26): one panel per figure, one bar
//! per server measured (kapi embedded, kapi on etcd, the minimal server or
//! disk baseline, upstream measured with `--against` or its reference
//! figure). Drawn from the same JSON document the run writes, so an older
//! results file can be drawn again.

use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;
use serde_json::Value;

const COLS: usize = 3;
const PANEL: (u32, u32) = (520, 300);

/// The colour of a server's bar: kapi in blues, baselines grey, upstream red.
fn colour(key: &str) -> RGBColor {
    match key {
        "kapi-embedded" => RGBColor(31, 119, 180),
        "kapi-etcd" => RGBColor(120, 170, 220),
        "upstream" | "upstream-ref" => RGBColor(214, 39, 40),
        _ => RGBColor(150, 150, 150),
    }
}

/// One bar: the server's row value, else its p99 (latency figures), else p50.
fn bars(fig: &Value) -> (Vec<(String, String, f64)>, &'static str) {
    let mut out = Vec::new();
    let mut what = "";
    if let Some(servers) = fig["servers"].as_object() {
        for (key, row) in servers {
            let label = row["label"].as_str().unwrap_or(key).to_string();
            let picked = [("value", ""), ("p99_ms", "p99"), ("p50_ms", "p50")]
                .iter()
                .find_map(|(field, name)| row[*field].as_f64().map(|v| (v, *name)));
            if let Some((v, name)) = picked {
                if !name.is_empty() {
                    what = name;
                }
                out.push((key.clone(), label, v));
            }
        }
    }
    (out, what)
}

/// Draws `doc` (the run's JSON results) into `path`.
pub fn draw(doc: &Value, path: &Path) -> Result<()> {
    let figures: Vec<&Value> = doc["figures"]
        .as_array()
        .map(|a| a.iter().filter(|f| !bars(f).0.is_empty()).collect())
        .unwrap_or_default();
    if figures.is_empty() {
        return Err(anyhow!("no figure has a measured value"));
    }
    let rows = figures.len().div_ceil(COLS);
    let size = (PANEL.0 * COLS as u32, PANEL.1 * rows as u32 + 40);
    let root = SVGBackend::new(path, size).into_drawing_area();
    let err = |e: DrawingAreaErrorKind<_>| anyhow!("drawing {}: {e:?}", path.display());
    root.fill(&WHITE).map_err(err)?;
    let title = format!(
        "kapi benchmarks ({}; {})",
        doc["kapi"].as_str().unwrap_or("?"),
        doc["timestamp"].as_str().unwrap_or("")
    );
    let (head, body) = root.split_vertically(40);
    head.titled(&title, ("sans-serif", 20)).map_err(err)?;
    let panels = body.split_evenly((rows, COLS));
    for (fig, area) in figures.iter().zip(panels.iter()) {
        let (bars, what) = bars(fig);
        let unit = fig["unit"].as_str().unwrap_or("");
        let top = bars.iter().map(|b| b.2).fold(0.0f64, f64::max) * 1.15;
        let top = if top > 0.0 { top } else { 1.0 };
        let mut caption: String = fig["title"].as_str().unwrap_or("").to_string();
        if caption.len() > 70 {
            caption.truncate(67);
            caption.push_str("...");
        }
        let goals: Vec<String> = fig["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|g| {
                let met = match g["met"].as_bool() {
                    Some(true) => "met",
                    Some(false) => "MISSED",
                    None => "-",
                };
                format!("{} {met}", g["target"].as_str().unwrap_or(""))
            })
            .collect();
        let mut chart = ChartBuilder::on(area)
            .caption(&caption, ("sans-serif", 13))
            .margin(8)
            .x_label_area_size(if goals.is_empty() { 10 } else { 24 })
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..bars.len() as f64, 0.0..top)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .x_labels(0)
            .y_desc(if what.is_empty() {
                unit.to_string()
            } else {
                format!("{what} {unit}")
            })
            .y_label_style(("sans-serif", 11))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, (key, _, v))| {
                let x = i as f64;
                Rectangle::new([(x + 0.15, 0.0), (x + 0.85, *v)], colour(key).filled())
            }))
            .map_err(err)?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, (_, label, v))| {
                let short: String = label.chars().take(22).collect();
                Text::new(
                    format!("{short}: {}", short_num(*v)),
                    (i as f64 + 0.15, *v + top * 0.02),
                    ("sans-serif", 10),
                )
            }))
            .map_err(err)?;
        if !goals.is_empty() {
            let line = goals.join("; ");
            area.draw(&Text::new(
                line.chars().take(90).collect::<String>(),
                (10, PANEL.1 as i32 - 16),
                ("sans-serif", 10),
            ))
            .map_err(err)?;
        }
    }
    root.present().map_err(err)?;
    Ok(())
}

fn short_num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}
