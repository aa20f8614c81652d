"""Offline manual pipeline: manual file -> sentences, tokens, parse -> stored artifact."""
