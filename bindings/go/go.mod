module github.com/libcattn/cattn-go

go 1.21
