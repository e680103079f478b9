# Recipes for day-to-day work. CI runs .ci/run, which uses the same commands.

build:
    cargo build --release

test:
    cargo test

bench:
    cargo bench

fmt:
    cargo fmt

lint:
    cargo fmt --check
    cargo clippy --all-targets -- -D warnings
