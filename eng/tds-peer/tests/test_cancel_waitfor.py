"""Cancelling `WAITFOR DELAY` from another thread (SQLCancel), through both drivers.

SQL Server ends the cancelled WAITFOR by acknowledging the client's ATTENTION with
DONE(DONE_ATTN), and the connection runs the next statement. The peer once ended the batch with
a plain DONE instead, and both drivers waited for the acknowledgement for ever (Driver 18's
SQLCancel too), plaintext or TLS.

How the interrupted execute ends is each driver's own: FreeTDS fails it with HY008; Driver 18
returns success with no result (as for the peer's stall fault; the ODBC spec allows an execute
to succeed while the cancel does too), or HY010 when one of this test's repeated cancels lands
between the execute's return and pyodbc's next call. Each is asserted exactly, so a change shows.
"""

import threading

import pyodbc
import pytest

import tdspeer
from conftest import require_driver

# Long enough that a WAITFOR the cancel did not end is still running when the guard gives up.
DELAY = "00:01:00"
# Not a speed limit: a guard so that a lost acknowledgement fails the test instead of hanging.
HANG_GUARD_S = 30


@pytest.mark.parametrize("mode", ["notsup", "on"])
def test_cross_thread_cancel_of_waitfor(mode, driver):
    require_driver(driver)
    # A peer of its own: when it stops, a driver still waiting on it gets an error, so a
    # failing run leaves no thread blocked in the driver.
    with tdspeer.start_peer(encrypt=mode) as p:
        cn = pyodbc.connect(tdspeer.conn_str(p, driver), timeout=10, autocommit=True)
        cur = cn.cursor()
        outcome = {}
        started = threading.Event()

        def execute():
            started.set()
            try:
                cur.execute(f"WAITFOR DELAY '{DELAY}'")
                outcome["result"] = "returned"
            except pyodbc.Error as e:
                outcome["result"] = e

        worker = threading.Thread(target=execute, daemon=True)
        stop = threading.Event()

        def cancel():
            # SQLCancel before the WAITFOR reached the server does nothing, so cancel until
            # the execute returns (Driver 18's SQLCancel itself waits for the acknowledgement).
            started.wait()
            while not stop.wait(0.3) and worker.is_alive():
                cur.cancel()

        canceller = threading.Thread(target=cancel, daemon=True)
        worker.start()
        canceller.start()
        worker.join(HANG_GUARD_S)
        stop.set()
        assert not worker.is_alive(), "the cancelled WAITFOR never returned"
        canceller.join(HANG_GUARD_S)
        assert not canceller.is_alive(), "SQLCancel never returned"
        result = outcome["result"]
        if driver == "freetds":
            assert isinstance(result, pyodbc.Error) and result.args[0] == "HY008", result
        elif result != "returned":
            # This test's own race, not the peer's: a repeated cancel that lands after
            # SQLExecDirect returned but before pyodbc's SQLNumResultCols closes the statement,
            # and the driver manager then refuses SQLNumResultCols (HY010). The cancel reached
            # the server either way; what follows checks the connection.
            assert isinstance(result, pyodbc.Error) and result.args[0] == "HY010", result
            assert "SQLNumResultCols" in str(result), result
        else:
            assert cur.description is None
        # The connection is usable: the next statement runs, on another cursor and on this one.
        assert cn.cursor().execute("SELECT 3").fetchone()[0] == 3
        assert cur.execute("SELECT 4").fetchone()[0] == 4
        cn.close()
