#!/usr/bin/env python3
"""tests/lib/scrape.py - HTTP for the metrics tests, with the standard library.

  scrape.py get URL [ACCEPT]          print the body (status != 200: exit 1,
                                    "STATUS body" on stderr)
  scrape.py head URL                  print "STATUS Content-Type"
  scrape.py query PROM_URL EXPR [T]   evaluate EXPR at time T (default now)
                                    with Prometheus's HTTP API; print one
                                    "LABELS VALUE" line per series
  scrape.py raw HOST PORT BYTES [N]   send BYTES (Python escapes allowed),
                                    print the response's status line (N
                                    times, on N connections one by one)
  scrape.py port                      print a free TCP port on 127.0.0.1
  scrape.py hog HOST PORT N URL       hold N connections open without a word,
                                    then GET URL: print its status and the
                                    seconds it took
"""
import time
import json
import socket
import sys
import urllib.parse
import urllib.request


def get(url, accept=None):
    req = urllib.request.Request(url)
    if accept:
        req.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def main():
    cmd = sys.argv[1]
    if cmd == "get":
        status, _, body = get(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
        if status != 200:
            sys.stderr.write("%d %s\n" % (status, body.decode(errors="replace")))
            return 1
        sys.stdout.write(body.decode())
    elif cmd == "head":
        status, ctype, _ = get(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
        print(status, ctype)
    elif cmd == "query":
        args = {"query": sys.argv[3]}
        if len(sys.argv) > 4:
            args["time"] = sys.argv[4]
        url = sys.argv[2] + "/api/v1/query?" + urllib.parse.urlencode(args)
        status, _, body = get(url)
        doc = json.loads(body)
        if doc.get("status") != "success":
            sys.stderr.write("query %s: %s\n" % (sys.argv[3], body.decode()))
            return 1
        for r in doc["data"]["result"]:
            labels = ",".join("%s=%s" % kv for kv in sorted(r["metric"].items()))
            print(labels or "-", r["value"][1])
    elif cmd == "raw":
        for _ in range(int(sys.argv[5]) if len(sys.argv) > 5 else 1):
            s = socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=20)
            s.sendall(sys.argv[4].encode().decode("unicode_escape").encode("latin-1"))
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            s.close()
            print(data.split(b"\r\n", 1)[0].decode(errors="replace"))
    elif cmd == "hog":
        idle = []
        for _ in range(int(sys.argv[4])):
            idle.append(socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=20))
            idle[-1].sendall(b"GET /metr")
        t0 = time.monotonic()
        status, _, _ = get(sys.argv[5])
        print(status, "%.1f" % (time.monotonic() - t0))
        for s in idle:
            s.close()
    elif cmd == "port":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
