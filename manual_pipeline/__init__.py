"""Offline manual pipeline: manual file -> sentences, tokens, dependency parse -> stored artifact."""
