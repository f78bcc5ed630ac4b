// The GoTrue tests use AuthTestSupport's harness (ManualClock, makeAPI, request helpers).
@_exported import AuthTestSupport
