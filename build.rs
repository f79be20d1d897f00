//! A Windows build with mingw (`x86_64-pc-windows-gnu`) links glslang's
//! C++ runtime into `sylva.exe`, so the exe runs on a VJ's machine without
//! mingw's `libstdc++-6.dll` beside it. glslang asks for `stdc++` as a
//! dynamic library and rustc keeps that request dynamic, so the static
//! archive alone is put on the search path first: the linker takes the
//! first `libstdc++` it finds.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "windows" || env != "gnu" {
        return;
    }
    let compiler = std::env::var("CXX_x86_64_pc_windows_gnu")
        .unwrap_or_else(|_| "x86_64-w64-mingw32-g++".to_string());
    let found = Command::new(&compiler)
        .arg("-print-file-name=libstdc++.a")
        .output();
    let archive = match found {
        Ok(output) if output.status.success() => {
            PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
        }
        _ => {
            println!("cargo:warning={compiler} not found: sylva.exe will need libstdc++-6.dll");
            return;
        }
    };
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    let static_only = out.join("static-stdc++");
    let copied = std::fs::create_dir_all(&static_only)
        .and_then(|()| std::fs::copy(&archive, static_only.join("libstdc++.a")));
    match copied {
        Ok(_) => println!("cargo:rustc-link-search=native={}", static_only.display()),
        Err(e) => println!("cargo:warning={}: {e}", archive.display()),
    }
}
