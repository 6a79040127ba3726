"""Work arrays: reused under one name in one thread, grown when too small, separate per thread."""

import threading

import numpy as np

from simready.common.scratch import work_array


def test_a_name_reuses_its_pages_and_grows_when_asked_for_more():
    a = work_array("test.a", (100, 3), np.float32)
    assert a.shape == (100, 3) and a.dtype == np.float32 and a.flags.c_contiguous and a.flags.writeable
    a[:] = 1.0
    b = work_array("test.a", 50, np.float64)  # smaller: the same memory
    assert np.shares_memory(a, b)
    c = work_array("test.a", 10_000, np.int64)  # larger: a new buffer
    assert c.shape == (10_000,) and not np.shares_memory(a, c)
    assert not np.shares_memory(work_array("test.b", 50, np.float64), work_array("test.a", 50, np.float64))
    assert work_array("test.a", (0, 3), np.float32).shape == (0, 3)


def test_each_thread_has_its_own():
    mine = work_array("test.t", 1000, np.float64)
    theirs = []
    t = threading.Thread(target=lambda: theirs.append(work_array("test.t", 1000, np.float64)))
    t.start()
    t.join()
    assert not np.shares_memory(mine, theirs[0])
