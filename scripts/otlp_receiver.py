#!/usr/bin/env python3
"""A small OTLP/HTTP trace receiver for the tests of the runtime's OpenTelemetry export.

It accepts `POST /v1/traces` with an `ExportTraceServiceRequest` in binary protobuf
(`application/x-protobuf`), decodes it with the official definitions (`opentelemetry-proto`
from PyPI), and keeps every span. `GET /spans` answers them as a JSON array, one object per
span:

    {"traceId", "spanId", "parentSpanId" (hex, "" for a root), "name", "kind",
     "startTimeUnixNano", "endTimeUnixNano", "attributes": {key: value},
     "status": {"code", "message"}, "service": the resource's service.name, "scope",
     "events": [{"name", "attributes"}]}

Attribute values are decoded to JSON: strings, ints, doubles, bools, and arrays of them.
`GET /raw` answers every request body received, as it came, one after the other: what a test
looks for in everything that was sent, decoded or not.

    python3 scripts/otlp_receiver.py [--port 4318] [--out spans.jsonl]

Prints `listening on http://127.0.0.1:PORT` once it accepts (port 0 picks a free one), and with
`--out` appends each span as a JSON line to that file too. Install its packages with
`python3 -m venv .venv/otlp && .venv/otlp/bin/pip install -r scripts/otlp_receiver.requirements.txt`.
"""

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

SPANS = []
RAW = []
LOCK = threading.Lock()
OUT = None


def any_value(value):
    """An `AnyValue` as plain JSON."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [any_value(item) for item in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, which)


def attributes(pairs):
    return {pair.key: any_value(pair.value) for pair in pairs}


def decode(request):
    """The spans of one export request, as JSON objects."""
    spans = []
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    {
                        "traceId": span.trace_id.hex(),
                        "spanId": span.span_id.hex(),
                        "parentSpanId": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": span.kind,
                        "startTimeUnixNano": span.start_time_unix_nano,
                        "endTimeUnixNano": span.end_time_unix_nano,
                        "attributes": attributes(span.attributes),
                        "status": {"code": span.status.code, "message": span.status.message},
                        "service": resource.get("service.name"),
                        "scope": scope_spans.scope.name,
                        "events": [
                            {"name": event.name, "attributes": attributes(event.attributes)}
                            for event in span.events
                        ],
                    }
                )
    return spans


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/v1/traces":
            self.send_error(404, "only /v1/traces is received here")
            return
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/x-protobuf":
            self.send_error(415, "expected application/x-protobuf (OTLP/HTTP binary)")
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except Exception as error:  # a body that is not an export request
            self.send_error(400, f"not an ExportTraceServiceRequest: {error}")
            return
        spans = decode(request)
        with LOCK:
            RAW.append(body)
            SPANS.extend(spans)
            if OUT is not None:
                for span in spans:
                    OUT.write(json.dumps(span) + "\n")
                OUT.flush()
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_GET(self):
        if self.path not in ("/spans", "/raw"):
            self.send_error(404, "GET /spans lists the received spans, GET /raw answers the bodies received")
            return
        with LOCK:
            body = json.dumps(SPANS).encode() if self.path == "/spans" else b"".join(RAW)
        self.send_response(200)
        self.send_header("Content-Type", "application/json" if self.path == "/spans" else "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


def main():
    global OUT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=4318)
    parser.add_argument("--out", help="append each span as a JSON line to this file")
    args = parser.parse_args()
    if args.out:
        OUT = open(args.out, "a", encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
