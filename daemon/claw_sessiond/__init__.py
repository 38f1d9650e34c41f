"""claw-sessiond: the single-writer session store daemon for local AI-agent harnesses."""

__version__ = "0.1.0"
