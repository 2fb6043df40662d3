"""Dynamo's hooks as context managers (logs, metrics, clean state, compile helpers, the
regions a program compiles), each patch feature-detected; the only place private Dynamo APIs are
touched."""
