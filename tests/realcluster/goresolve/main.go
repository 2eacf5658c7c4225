// goresolve: Go's own resolver (net.Resolver with PreferGo, built with CGO_ENABLED=0) in
// a pod, and a steady query load, for tests/realcluster/pods.
//
//	goresolve sleep                      stays up (the pod's command)
//	goresolve host NAME                  LookupHost through /etc/resolv.conf: one address a line
//	goresolve load NAME WANT RATE SECS   RATE A queries a second for SECS seconds to the first
//	                                     nameserver of /etc/resolv.conf, each from a new UDP
//	                                     socket (a new source port, as a stub resolver sends
//	                                     them), one try, 1 s timeout; every query that gets no
//	                                     answer, or an answer other than NOERROR with WANT,
//	                                     is printed; last line "sent N lost N"
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

func query(name string, id uint16) []byte {
	msg := make([]byte, 12, 512)
	binary.BigEndian.PutUint16(msg[0:], id)
	binary.BigEndian.PutUint16(msg[2:], 0x0100) // RD
	binary.BigEndian.PutUint16(msg[4:], 1)
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		msg = append(msg, byte(len(label)))
		msg = append(msg, label...)
	}
	return append(msg, 0, 0, 1, 0, 1) // A IN
}

// one sends one query and returns "" when it was answered NOERROR with want, else why not.
func one(server, name string, want net.IP) string {
	conn, err := net.Dial("udp", net.JoinHostPort(server, "53"))
	if err != nil {
		return "dial: " + err.Error()
	}
	defer conn.Close()
	id := uint16(rand.Intn(65536))
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write(query(name, id)); err != nil {
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
		if !strings.Contains(string(buf[:n]), string(want.To4())) {
			return "answer without " + want.String()
		}
		return ""
	}
}

func load(name string, want net.IP, rate int, secs int) {
	server := nameserver()
	var mu sync.Mutex
	var wg sync.WaitGroup
	sent, lost := 0, 0
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.Now().Add(time.Duration(secs) * time.Second)
	for now := range tick.C {
		if now.After(end) {
			break
		}
		sent++
		wg.Add(1)
		go func(at time.Time) {
			defer wg.Done()
			if why := one(server, name, want); why != "" {
				mu.Lock()
				lost++
				fmt.Printf("%s lost: %s\n", at.UTC().Format("15:04:05.000"), why)
				mu.Unlock()
			}
		}(now)
	}
	wg.Wait()
	fmt.Printf("sent %d lost %d\n", sent, lost)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: goresolve sleep | host NAME | load NAME WANT RATE SECS")
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
		load(os.Args[2], net.ParseIP(os.Args[3]), rate, secs)
	default:
		os.Exit(2)
	}
}
