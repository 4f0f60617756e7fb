"""moto's S3 server with conditional creates decided atomically, as S3 decides them.

usage: python moto_atomic.py [moto_server's arguments]

moto checks If-None-Match (and If-Match) on a PUT and then stores the object
on its request thread, unlocked: two concurrent creates of one key can both
succeed, the later one replacing the earlier. Against real S3 one of them gets
412. The concurrency tests race conditional creates of metadata versions, so
on moto as it comes a writer could be told its commit landed and then lose it
(seen while looping writers: a batch acknowledged and absent). Here every
PutObject holds one lock from the check to the store."""

import sys
import threading

from moto.s3.responses import S3Response
from moto.server import main

_lock = threading.Lock()
_put_object = S3Response.put_object


def put_object(self):
    with _lock:
        return _put_object(self)


S3Response.put_object = put_object

if __name__ == "__main__":
    sys.exit(main())
