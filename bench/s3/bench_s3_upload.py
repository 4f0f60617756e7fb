"""Large-object upload over moto's S3 server: our store's put (one PUT, and
multipart with the default 64 MiB threshold / 16 MiB parts / 4 at a time)
beside boto3 (put_object in one request, and upload_file, its managed
multipart transfer with 8 MiB parts on 10 threads), on the same server in one run.

usage: python bench/s3/bench_s3_upload.py [--mb 200] [--repeat 2]
Prints per mode the median seconds, MB/s and the number of requests the
upload took (counted through a recording proxy in a separate, untimed run,
so that the proxy's copying does not weigh on the timings). The reference
(timelake 0.7.0) has no call to upload an object, hence boto3 as the peer.
Timings are indicative: moto is a Python server on the same two cores.
"""

import argparse
import ctypes
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 1024)]


class PutItem(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("data", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def our_store_put(lib, url, options, key, data):
    """tl_store_open + tl_store_put_many of one object (internal symbols of libtimelake)."""
    flat = [x.encode() for kv in options.items() for x in kv] + [None]
    opts = (ctypes.c_char_p * len(flat))(*flat)
    store, err = ctypes.c_void_p(), Error()
    if lib.tl_store_open(url.encode(), opts, ctypes.byref(store), ctypes.byref(err)) != 0:
        raise RuntimeError(err.message.decode())
    buf = ctypes.c_char_p(data)
    item = PutItem(key.encode(), ctypes.cast(buf, ctypes.c_void_p), len(data))
    try:
        if lib.tl_store_put_many(store, ctypes.byref(item), 1, ctypes.byref(err)) != 0:
            raise RuntimeError(err.message.decode())
    finally:
        lib.tl_store_free(store)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    if "TL_LIB" not in os.environ:
        common.release_library()
    import boto3
    from boto3.s3.transfer import TransferConfig
    from fault_proxy import FaultProxy
    from store_servers import start_moto, stop

    lib = ctypes.CDLL(os.environ["TL_LIB"])
    lib.tl_store_open.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.tl_store_put_many.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    lib.tl_store_free.argtypes = [ctypes.c_void_p]
    data = os.urandom(args.mb << 20)
    tmp = tempfile.mkdtemp(prefix="tl-bench-upload-")
    path = Path(tmp) / "big.bin"
    path.write_bytes(data)
    proc, s3 = start_moto(tmp)

    def modes(endpoint):
        opts = s3.option_list(aws_endpoint=endpoint, cache_memory="0", timeout="10min")
        client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                              aws_secret_access_key="testing", region_name="us-east-1")
        prefix = s3.url().split("/", 3)[3]
        return {
            "ours, one PUT": lambda: our_store_put(lib, s3.url(prefix), {**opts, "multipart_threshold": "1GiB"},
                                                   "one.bin", data),
            "ours, multipart": lambda: our_store_put(lib, s3.url(prefix), opts, "mp.bin", data),
            "boto3 put_object": lambda: client.put_object(Bucket=s3.bucket, Key=f"{prefix}/b1.bin", Body=data),
            "boto3 upload_file": lambda: client.upload_file(str(path), s3.bucket, f"{prefix}/b2.bin",
                                                            Config=TransferConfig()),
        }

    try:
        requests = {}
        with FaultProxy(s3.endpoint) as proxy:
            for name, fn in modes(proxy.endpoint).items():
                mark = proxy.mark()
                fn()
                time.sleep(0.2)
                requests[name] = len(proxy.requests_since(mark))
        times = {name: [] for name in requests}
        for _ in range(args.repeat):
            for name, fn in modes(s3.endpoint).items():
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    finally:
        stop(proc)
    print(f"upload of {args.mb} MiB to moto's S3 (local); median of {args.repeat}")
    print(f"{'mode':20} {'seconds':>8} {'MB/s':>7} {'requests':>9}")
    for name, ts in times.items():
        s = statistics.median(ts)
        print(f"{name:20} {s:8.2f} {args.mb * 1.048576 / s:7.1f} {requests[name]:9d}")
    base = statistics.median(times["boto3 upload_file"])
    print(f"ratio boto3 upload_file / ours multipart: {base / statistics.median(times['ours, multipart']):.2f}")


if __name__ == "__main__":
    main()
