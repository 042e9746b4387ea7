#!/bin/sh
# The project's test entry point: Python tests with pytest, C++ tests compiled with g++.
# Each suite writes JUnit XML into build/ so a CI (or reviewbot) can tell which test failed.
mkdir -p build
status=0
python3 -m pytest -q -p no:cacheprovider --junitxml=build/junit-python.xml rtp_llm/test || status=1
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
