// empty.cpp — a source for the stand-in coopbench_backends (tests/docs/optional_library).
