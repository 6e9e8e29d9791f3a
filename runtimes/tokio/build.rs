// build.rs — records what the program was built with, for its --list context: the tokio
// version cargo resolved (from Cargo.lock), tokio's features (from Cargo.toml) and rustc's
// version, and the release profile the program was built with (Cargo.toml's
// [profile.release] keys, as "opt-level=3 lto=fat ..."; cargo's PROFILE says it was release).
// Nothing else is generated.
use std::process::Command;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string(format!("{dir}/Cargo.lock")).unwrap_or_default();
    let mut version = String::from("unknown");
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l.trim() == "name = \"tokio\"" {
            if let Some(v) = lines.next() {
                version = v.trim().trim_start_matches("version = ").trim_matches('"').to_string();
            }
            break;
        }
    }
    let manifest = std::fs::read_to_string(format!("{dir}/Cargo.toml")).unwrap_or_default();
    let features = manifest
        .lines()
        .find(|l| l.starts_with("tokio = "))
        .and_then(|l| l.split("features = [").nth(1))
        .and_then(|l| l.split(']').next())
        .map(|f| f.replace('"', "").replace(' ', ""))
        .unwrap_or_else(|| "unknown".into());
    // The keys of [profile.release], in the file's order: what rustc was asked for (cargo gives
    // a build script OPT_LEVEL and PROFILE, not lto, codegen-units or panic).
    let mut profile = Vec::new();
    let mut in_release = false;
    for l in manifest.lines().map(str::trim) {
        if l.starts_with('[') {
            in_release = l == "[profile.release]";
        } else if in_release && !l.starts_with('#') {
            if let Some((k, v)) = l.split_once('=') {
                profile.push(format!("{}={}", k.trim(), v.trim().trim_matches('"')));
            }
        }
    }
    let profile = format!(
        "{} ({})",
        std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into()),
        if profile.is_empty() { "cargo's defaults".to_string() } else { profile.join(" ") }
    );
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc_version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=COOPBENCH_TOKIO_VERSION={version}");
    println!("cargo:rustc-env=COOPBENCH_TOKIO_FEATURES={features}");
    println!("cargo:rustc-env=COOPBENCH_RUSTC_VERSION={rustc_version}");
    println!("cargo:rustc-env=COOPBENCH_CARGO_PROFILE={profile}");
}
