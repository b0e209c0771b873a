"""Helpers of the compat harness. They never import the product: everything goes through executables."""
