#!/bin/sh
# The project's test entry point: Python tests with pytest, C++ tests compiled with g++.
# Each suite writes JUnit XML into build/ so a CI (or reviewbot) can tell which test failed.
mkdir -p build
status=0
if python3 -c 'import pytest' 2>/dev/null; then
    python3 -m pytest -q -p no:cacheprovider --junitxml=build/junit-python.xml rtp_llm/test || status=1
else
    # Without pytest (a machine with reviewbot alone installed): the same test functions, run one by
    # one, with the same JUnit XML pytest would write.
    python3 - rtp_llm/test <<'PY' || status=1
import importlib, pathlib, sys, traceback
from xml.sax.saxutils import quoteattr

sys.path.insert(0, ".")
cases, failed = [], 0
for path in sorted(pathlib.Path(sys.argv[1]).glob("test_*.py")):
    module = ".".join(path.with_suffix("").parts)
    mod = importlib.import_module(module)
    for name in sorted(n for n in vars(mod) if n.startswith("test_") and callable(getattr(mod, n))):
        try:
            getattr(mod, name)()
            cases.append((module, name, ""))
        except Exception:
            failed += 1
            cases.append((module, name, traceback.format_exc()))
            print(f"FAILED {module}::{name}\n{traceback.format_exc()}")
with open("build/junit-python.xml", "w") as out:
    out.write(f'<testsuites><testsuite name="python" tests="{len(cases)}" failures="{failed}">')
    for module, name, error in cases:
        body = f"<failure message={quoteattr(error[-500:])}/>" if error else ""
        out.write(f"<testcase classname={quoteattr(module)} name={quoteattr(name)}>{body}</testcase>")
    out.write("</testsuite></testsuites>\n")
print(f"{len(cases) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
fi
for src in $(find rtp_llm/cpp -name '*_test.cc' | sort); do
    name=$(basename "$src" .cc)
    bin="build/$name"
    if g++ -std=c++17 -I. -o "$bin" "$src" rtp_llm/cpp/config/ModelConfig.cc && "./$bin" > "build/$name.log" 2>&1; then
        printf '<testsuite name="%s" tests="1" failures="0"><testcase classname="cpp" name="%s" file="%s"/></testsuite>\n' \
            "$name" "$name" "$src" > "build/junit-$name.xml"
    else
        status=1
        printf '<testsuite name="%s" tests="1" failures="1"><testcase classname="cpp" name="%s" file="%s"><failure message="exit status"/></testcase></testsuite>\n' \
            "$name" "$name" "$src" > "build/junit-$name.xml"
        cat "build/$name.log"
    fi
done
exit $status
