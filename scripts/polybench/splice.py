"""Splices arrayflow's C output into a PolyBench/C benchmark in place of
its kernel function: `splice.py BENCH.c OUTPUT.c` prints the benchmark
with the kernel replaced. The output must define the kernel function as
the benchmark does (`static void kernel_NAME(`): it is a drop-in or it is
refused (exit 1)."""
import re
import sys


def function(text, name):
    """(start, end) of the definition of `name`: from its `static` (or
    `void`) to the closing brace at column 0."""
    m = re.search(r"^(static\s+)?void\s+" + re.escape(name) + r"\s*\(", text, re.M)
    if not m:
        return None
    end = text.find("\n}", m.end())
    return None if end < 0 else (m.start(), end + 2)


def main():
    bench, output = sys.argv[1], sys.argv[2]
    text = open(bench).read()
    out = open(output).read()
    name = re.search(r"^void\s+(kernel_\w+)\s*\(", text, re.M)
    if not name:
        sys.exit(f"{bench}: no kernel function")
    name = name.group(1)
    old = function(text, name)
    if old is None or function(out, name) is None:
        sys.exit(f"the output does not define `void {name}(...)` as the benchmark does")
    sys.stdout.write(text[: old[0]] + out + text[old[1]:])


main()
