package e2enetwork

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/logs"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"
	"k8s.io/kubernetes/test/e2e/framework/testfiles"
	e2etestingmanifests "k8s.io/kubernetes/test/e2e/testing-manifests"
	utilnet "k8s.io/utils/net"

	// The specs: [sig-network], the DNS tests among them.
	_ "k8s.io/kubernetes/test/e2e/network"

	// As upstream's e2e_test.go: the framework's debug and node hooks.
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
	_ "k8s.io/kubernetes/test/utils/ktesting/format"
)

// The flags of upstream's test/e2e/e2e_test.go (less the conformance list).
func TestMain(m *testing.M) {
	var versionFlag bool
	flag.CommandLine.BoolVar(&versionFlag, "version", false, "Displays version information.")
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	if versionFlag {
		fmt.Printf("%s\n", version.Get())
		os.Exit(0)
	}
	if flag.CommandLine.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unknown additional command line arguments: %s", flag.CommandLine.Args())
		os.Exit(1)
	}
	testfiles.AddFileSource(e2etestingmanifests.GetE2ETestingManifestsFS())
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

// The cluster's IP family, as upstream's setupSuitePerGinkgoNode (test/e2e/e2e.go) sets it
// once per Ginkgo process: the kubernetes Service's ClusterIP. The DNS tests read it
// (framework.TestContext.ClusterIsIPv6()): their probers ask AAAA and ip6.arpa names in an
// IPv6 cluster; without it they asked A there, which no IPv6 cluster answers.
var _ = ginkgo.SynchronizedBeforeSuite(func(ctx context.Context) []byte {
	c, err := framework.LoadClientset()
	framework.ExpectNoError(err, "Error loading client")
	svc, err := c.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	framework.ExpectNoError(err, "the kubernetes Service")
	if utilnet.IsIPv6String(svc.Spec.ClusterIP) {
		return []byte("ipv6")
	}
	return []byte("ipv4")
}, func(family []byte) {
	framework.TestContext.IPFamily = string(family)
	framework.Logf("Cluster IP family: %s", framework.TestContext.IPFamily)
})

// upstream's RunE2ETests, without the rest of its suite-wide setup (waiting for system
// pods, which -minStartupPods=-1 skips anyway) and its reporters.
func TestE2E(t *testing.T) {
	logs.InitLogs()
	defer logs.FlushLogs()
	klog.EnableContextualLogging(true)
	gomega.RegisterFailHandler(framework.Fail)
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	ginkgo.RunSpecs(t, "mod-k8s e2e network suite", suiteConfig, reporterConfig)
}
