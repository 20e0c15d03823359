"""Context organization for COrg: relation graph, grouping, question rewriting."""
