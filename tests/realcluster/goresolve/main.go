// goresolve: Go's own resolver (net.Resolver with PreferGo, built with CGO_ENABLED=0) in
// a pod, and a steady query load, for tests/realcluster/pods.
//
//	goresolve sleep                      stays up (the pod's command)
//	goresolve host NAME                  LookupHost through /etc/resolv.conf: one address a line
//	goresolve load NAME WANT RATE SECS [TRIES [SERVER]]
//	                                     RATE queries a second for SECS seconds (A, or AAAA
//	                                     when WANT is an IPv6 address) to SERVER, by default
//	                                     the first nameserver of /etc/resolv.conf, each try
//	                                     from a new UDP socket (a new source port, as Go's
//	                                     resolver sends them), 1 s timeout, TRIES tries
//	                                     (default 1); every query whose last try gets no
//	                                     answer, or an answer other than NOERROR with WANT,
//	                                     is printed (each try's source port and why);
//	                                     last line "sent N lost N retried N"
//	                                     (retried: answered at a later try). A %d in NAME
//	                                     is the query's number (names no cache holds);
//	                                     WANT "any" (or "any6": AAAA) takes any NOERROR
//	                                     answer with records
//	goresolve flood NAME RATE SECS       RATE A queries a second for SECS seconds to the first
//	                                     nameserver, NAME's %d the query's number, none
//	                                     waited for: a client flooding names; last line
//	                                     "flooded N"
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func nameserver() string {
	f, err := os.Open("/etc/resolv.conf")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 2 && fields[0] == "nameserver" {
			return fields[1]
		}
	}
	return ""
}

func query(name string, id uint16, qtype uint16) []byte {
	msg := make([]byte, 12, 512)
	binary.BigEndian.PutUint16(msg[0:], id)
	binary.BigEndian.PutUint16(msg[2:], 0x0100) // RD
	binary.BigEndian.PutUint16(msg[4:], 1)
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		msg = append(msg, byte(len(label)))
		msg = append(msg, label...)
	}
	return append(msg, 0, byte(qtype>>8), byte(qtype), 0, 1) // IN
}

// anyType is the query type when WANT is "any" (A) or "any6" (AAAA).
var anyType uint16 = 1

// one sends one query and returns "" when it was answered NOERROR with want, else why not
// (with the try's source port: its conntrack entry and its packets can be found).
func one(server, name string, want net.IP) string {
	conn, err := net.Dial("udp", net.JoinHostPort(server, "53"))
	if err != nil {
		return "dial: " + err.Error()
	}
	defer conn.Close()
	why := tryOn(conn, name, want)
	if why != "" {
		why = fmt.Sprintf("port %d: %s", conn.LocalAddr().(*net.UDPAddr).Port, why)
	}
	return why
}

func tryOn(conn net.Conn, name string, want net.IP) string {
	id := uint16(rand.Intn(65536))
	conn.SetDeadline(time.Now().Add(time.Second))
	qtype, addr := uint16(1), []byte(want.To4())
	if want == nil {
		qtype, addr = anyType, nil
	} else if want.To4() == nil {
		qtype, addr = 28, []byte(want.To16())
	}
	if _, err := conn.Write(query(name, id, qtype)); err != nil {
		return "send: " + err.Error()
	}
	buf := make([]byte, 1500)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return "no answer: " + err.Error()
		}
		if n < 12 || binary.BigEndian.Uint16(buf) != id {
			continue
		}
		if rcode := buf[3] & 0xf; rcode != 0 {
			return "rcode " + strconv.Itoa(int(rcode))
		}
		if binary.BigEndian.Uint16(buf[6:]) == 0 {
			return "no answer records"
		}
		if addr != nil && !strings.Contains(string(buf[:n]), string(addr)) {
			return "answer without " + want.String()
		}
		return ""
	}
}

func load(name string, want net.IP, rate, secs, tries int, server string) {
	if server == "" {
		server = nameserver()
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sent, lost, retried := 0, 0, 0
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.Now().Add(time.Duration(secs) * time.Second)
	for now := range tick.C {
		if now.After(end) {
			break
		}
		sent++
		wg.Add(1)
		qname := name
		if strings.Contains(name, "%d") {
			qname = fmt.Sprintf(name, sent)
		}
		go func(at time.Time, name string) {
			defer wg.Done()
			var whys []string
			for try := 1; try <= tries; try++ {
				why := one(server, name, want)
				if why == "" {
					if try > 1 {
						mu.Lock()
						retried++
						fmt.Printf("%s retried: answered at try %d\n", at.UTC().Format("15:04:05.000"), try)
						mu.Unlock()
					}
					return
				}
				whys = append(whys, why)
			}
			mu.Lock()
			lost++
			fmt.Printf("%s lost: %s %s\n", at.UTC().Format("15:04:05.000"), name, strings.Join(whys, "; "))
			mu.Unlock()
		}(now, qname)
	}
	wg.Wait()
	fmt.Printf("sent %d lost %d retried %d\n", sent, lost, retried)
}

// flood sends rate queries a second for secs seconds, none waited for.
func flood(name string, rate, secs int) {
	server := nameserver()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.Now().Add(time.Duration(secs) * time.Second)
	n := 0
	var conns []net.Conn
	for now := range tick.C {
		if now.After(end) {
			break
		}
		n++
		conn, err := net.Dial("udp", net.JoinHostPort(server, "53"))
		if err != nil {
			continue
		}
		conn.Write(query(fmt.Sprintf(name, n), uint16(rand.Intn(65536)), 1))
		// Each from its own port, kept open a while (a stub waiting for its answer).
		conns = append(conns, conn)
		if len(conns) > 2*rate {
			conns[0].Close()
			conns = conns[1:]
		}
	}
	for _, c := range conns {
		c.Close()
	}
	fmt.Printf("flooded %d\n", n)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: goresolve sleep | host NAME | load NAME WANT RATE SECS [TRIES [SERVER]] | flood NAME RATE SECS")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "sleep":
		for {
			time.Sleep(time.Hour)
		}
	case "host":
		r := &net.Resolver{PreferGo: true}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		addrs, err := r.LookupHost(ctx, os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, a := range addrs {
			fmt.Println(a)
		}
	case "load":
		rate, _ := strconv.Atoi(os.Args[4])
		secs, _ := strconv.Atoi(os.Args[5])
		tries, server := 1, ""
		if len(os.Args) > 6 {
			tries, _ = strconv.Atoi(os.Args[6])
		}
		if len(os.Args) > 7 {
			server = os.Args[7]
		}
		want := net.ParseIP(os.Args[3])
		if os.Args[3] == "any6" {
			anyType = 28
		}
		load(os.Args[2], want, rate, secs, tries, server)
	case "flood":
		rate, _ := strconv.Atoi(os.Args[3])
		secs, _ := strconv.Atoi(os.Args[4])
		flood(os.Args[2], rate, secs)
	default:
		os.Exit(2)
	}
}
