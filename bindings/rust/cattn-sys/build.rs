// SPDX-License-Identifier: Apache-2.0
//! Finds libcattn for the linker: the directory in CATTN_LIB_DIR, else what
//! `pkg-config --libs-only-L --libs-only-l cattn` says. With the `link` feature off it links
//! nothing and looks for nothing. std only.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CATTN_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=src/bindings.rs");
    println!("cargo:rerun-if-changed=build.rs");

    // Cargo sets CARGO_FEATURE_<NAME> for every enabled feature.
    if env::var_os("CARGO_FEATURE_LINK").is_none() {
        return;
    }

    if let Some(dir) = env::var_os("CATTN_LIB_DIR").filter(|d| !d.is_empty()) {
        let dir = Path::new(&dir);
        let found = ["libcattn.so", "libcattn.a", "libcattn.dylib"]
            .iter()
            .any(|name| dir.join(name).exists());
        if !found {
            fail(&format!(
                "CATTN_LIB_DIR is {}, which holds no libcattn.so (or libcattn.a). Point it at \
                 the directory of a libcattn build, e.g. <repo>/build.",
                dir.display()
            ));
        }
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=cattn");
        // Dependents see it as DEP_CATTN_LIB_DIR.
        println!("cargo:lib_dir={}", dir.display());
        return;
    }

    match Command::new("pkg-config")
        .args(["--libs-only-L", "--libs-only-l", "cattn"])
        .output()
    {
        Ok(out) if out.status.success() => {
            let flags = String::from_utf8_lossy(&out.stdout).into_owned();
            let mut linked = false;
            for flag in flags.split_whitespace() {
                if let Some(dir) = flag.strip_prefix("-L") {
                    println!("cargo:rustc-link-search=native={dir}");
                    println!("cargo:lib_dir={dir}");
                } else if let Some(lib) = flag.strip_prefix("-l") {
                    linked |= lib == "cattn";
                    println!("cargo:rustc-link-lib={lib}");
                }
            }
            if !linked {
                fail(&format!(
                    "pkg-config's flags for cattn ({}) do not name -lcattn",
                    flags.trim()
                ));
            }
        }
        Ok(out) => fail(&format!(
            "CATTN_LIB_DIR is not set and pkg-config knows no cattn ({}). Set CATTN_LIB_DIR to \
             the directory holding libcattn.so, or PKG_CONFIG_PATH to one holding cattn.pc.",
            String::from_utf8_lossy(&out.stderr)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        )),
        Err(e) => fail(&format!(
            "CATTN_LIB_DIR is not set and the pkg-config program cannot be run ({e}). Set \
             CATTN_LIB_DIR to the directory holding libcattn.so."
        )),
    }
}

fn fail(message: &str) -> ! {
    // Cargo shows a failed build script's stderr; one line says it all.
    eprintln!("error: cattn-sys cannot find libcattn: {message}");
    std::process::exit(1);
}
