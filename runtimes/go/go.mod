module coopbench/go

go 1.19
