// Package e2enetwork is e2e.test with the Kubernetes e2e framework and the
// test/e2e/network specs only (the DNS tests among them), built by
// tests/realk8s/build e2e with `go test -c`: the upstream e2e_test.go's flag
// handling and runner, without the other suites' build.
package e2enetwork
