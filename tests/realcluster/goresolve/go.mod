module goresolve

go 1.22
