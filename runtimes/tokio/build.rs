// build.rs — records what the program was built with, for its --list context: the tokio
// version cargo resolved (from Cargo.lock), tokio's features (from Cargo.toml) and rustc's
// version. Nothing else is generated.
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
}
