#include "harness/cli.hpp"

int main(int argc, char** argv) { return coopbench::cli_main(argc, argv); }
