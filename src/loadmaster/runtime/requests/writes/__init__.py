"""What the API writes: each request validated first, so a refused one changes nothing, and audited."""
