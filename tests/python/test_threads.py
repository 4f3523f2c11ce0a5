"""Queries on one snapshot from 4 threads while another thread writes: the GIL is
released around queries and writes, and a View is safe to share."""
import threading

import amem


def test_queries_from_four_threads_while_a_thread_writes(store):
    with store.batch() as b:
        for i in range(300):
            b.put_node("fact:%d" % i, type="fact", content="lmdb writer %d note %d" % (i, i % 7))
            if i:
                b.put_edge("fact:%d" % i, "related_to", "fact:%d" % (i - 1))
    view = store.view()
    want_search = view.text_search("lmdb note", limit=10)
    want_traverse = view.traverse("fact:150", depth=3)
    errors = []
    stop = threading.Event()

    def reader():
        try:
            for _ in range(40):
                assert view.text_search("lmdb note", limit=10) == want_search
                assert view.traverse("fact:150", depth=3) == want_traverse
                view.centrality(metric="degree", limit=5)
        except Exception as e:  # reported below
            errors.append(e)

    def writer():
        try:
            i = 0
            while not stop.is_set():
                store.put_node("extra:%d" % i, content="lmdb writer extra")
                i += 1
        except Exception as e:
            errors.append(e)

    w = threading.Thread(target=writer)
    readers = [threading.Thread(target=reader) for _ in range(4)]
    w.start()
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    stop.set()
    w.join()
    assert errors == []
    # the writes landed, and a new view sees them while the old one did not move
    assert store.view().node_count > view.node_count
    assert view.text_search("lmdb note", limit=10) == want_search
