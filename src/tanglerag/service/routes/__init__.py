"""The service's routers, one per area: ask, index, users, operations."""
