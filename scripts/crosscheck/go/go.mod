module coopbench/crosscheck

go 1.18
