import pytest

from tanglerag.index.user_contexts import ContextStoreError, UserContextStore
from tanglerag.testing import HashEmbedder


def test_add_list_remove_persist(tmp_path, embedder):
    store = UserContextStore(tmp_path, embedder)
    added = store.add("alice", ["I live in Singapore.", "I am 67 years old."])
    assert [c.text for c in store.list("alice")] == ["I live in Singapore.", "I am 67 years old."]
    again = UserContextStore(tmp_path, embedder)  # a new process sees the same state
    contexts, vectors = again.vectors("alice")
    assert len(contexts) == 2 and vectors.shape == (2, embedder.dimension)
    again.remove("alice", added[0].id)
    assert [c.text for c in again.list("alice")] == ["I am 67 years old."]
    assert again.vectors("alice")[1].shape == (1, embedder.dimension)


def test_users_are_isolated(tmp_path, embedder):
    store = UserContextStore(tmp_path, embedder)
    store.add("alice", ["I live in Singapore."])
    store.add("bob", ["I work on a farm in Wales."])
    assert [c.text for c in store.list("bob")] == ["I work on a farm in Wales."]
    assert store.list("carol") == []
    with pytest.raises(ContextStoreError, match="no context with id"):
        store.remove("bob", store.list("alice")[0].id)


@pytest.mark.parametrize("user", ["../alice", "a/b", "", "..", "alice\n", "..\n"])
def test_user_ids_cannot_escape_the_store(tmp_path, embedder, user):
    with pytest.raises(ContextStoreError, match="invalid user id"):
        UserContextStore(tmp_path, embedder).add(user, ["x"])


def test_empty_statement_and_model_mismatch(tmp_path, embedder):
    store = UserContextStore(tmp_path, embedder)
    with pytest.raises(ContextStoreError, match="must not be empty"):
        store.add("alice", ["  "])
    store.add("alice", ["I live in Singapore."])
    with pytest.raises(ContextStoreError, match="embedded with 'hash-64'"):
        UserContextStore(tmp_path, HashEmbedder("other")).list("alice")
