"""Services that span the methods: the demo (every method offline on the embedded model)."""
