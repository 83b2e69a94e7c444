"""The Canasta correspondence server: gRPC edge, service layer, storage, notifications."""
