"""Independent access to the objects on the three local servers (boto3 for
moto, Shared Key requests for Azurite, the JSON API for fake-gcs-server), so
that tests check what a server holds without going through our library."""

import base64
import json
import re
import urllib.parse
import urllib.request

import boto3

from store_servers import azure_request


def s3_client(backend):
    return boto3.client("s3", endpoint_url=backend.endpoint, aws_access_key_id="testing",
                        aws_secret_access_key="testing", region_name="us-east-1")


def object_name(url, key=""):
    """The object name of key under a warehouse URL (scheme://bucket/prefix)."""
    prefix = url.split("/", 3)[3]
    return f"{prefix}/{key}" if key else prefix + "/"


def list_names(backend, prefix):
    if backend.name == "s3":
        pages = s3_client(backend).get_paginator("list_objects_v2").paginate(Bucket=backend.bucket, Prefix=prefix)
        return sorted(o["Key"] for page in pages for o in page.get("Contents", []))
    if backend.name == "azure":
        names, marker = [], ""
        while True:
            # Raw values: azure_request signs the query as written (our prefixes are plain).
            q = f"comp=list&prefix={prefix}&restype=container" + (f"&marker={marker}" if marker else "")
            body = azure_request(backend.endpoint, "GET", f"/{backend.bucket}", q).read().decode()
            names += re.findall(r"<Name>([^<]*)</Name>", body)
            m = re.search(r"<NextMarker>([^<]+)</NextMarker>", body)
            if not m:
                return sorted(names)
            marker = m.group(1)
    names, token = [], None
    while True:
        q = {"prefix": prefix, **({"pageToken": token} if token else {})}
        url = f"{backend.endpoint}/storage/v1/b/{backend.bucket}/o?" + urllib.parse.urlencode(q)
        page = json.load(urllib.request.urlopen(url))
        names += [o["name"] for o in page.get("items", [])]
        token = page.get("nextPageToken")
        if not token:
            return sorted(names)


def read(backend, name):
    if backend.name == "s3":
        return s3_client(backend).get_object(Bucket=backend.bucket, Key=name)["Body"].read()
    if backend.name == "azure":
        return azure_request(backend.endpoint, "GET", f"/{backend.bucket}/{urllib.parse.quote(name)}").read()
    url = f"{backend.endpoint}/storage/v1/b/{backend.bucket}/o/{urllib.parse.quote(name, safe='')}?alt=media"
    return urllib.request.urlopen(url).read()


def s3_pending_uploads(backend, prefix):
    """Multipart uploads begun and neither completed nor aborted."""
    out = s3_client(backend).list_multipart_uploads(Bucket=backend.bucket, Prefix=prefix)
    return out.get("Uploads", [])


def write(backend, name, data):
    """Puts an object through the server's own API, not our library."""
    if backend.name == "s3":
        s3_client(backend).put_object(Bucket=backend.bucket, Key=name, Body=data)
    elif backend.name == "azure":
        azure_request(backend.endpoint, "PUT", f"/{backend.bucket}/{name}", body=data,
                      headers={"x-ms-blob-type": "BlockBlob", "Content-Type": ""})
    else:
        q = urllib.parse.urlencode({"uploadType": "media", "name": name})
        urllib.request.urlopen(urllib.request.Request(
            f"{backend.endpoint}/upload/storage/v1/b/{backend.bucket}/o?{q}", data=data, method="POST",
            headers={"Content-Type": "application/octet-stream"}))


def head(backend, name):
    """(size, modified as Unix seconds, version tag) as the server states them:
    S3's and Azure's ETag without quotes, GCS's generation."""
    import email.utils
    if backend.name == "s3":
        h = s3_client(backend).head_object(Bucket=backend.bucket, Key=name)
        return h["ContentLength"], h["LastModified"].timestamp(), h["ETag"].strip('"')
    if backend.name == "azure":
        h = azure_request(backend.endpoint, "HEAD", f"/{backend.bucket}/{urllib.parse.quote(name)}").headers
        return (int(h["Content-Length"]), email.utils.parsedate_to_datetime(h["Last-Modified"]).timestamp(),
                h["ETag"].strip('"'))
    import datetime
    url = f"{backend.endpoint}/storage/v1/b/{backend.bucket}/o/{urllib.parse.quote(name, safe='')}"
    meta = json.load(urllib.request.urlopen(url))
    updated = datetime.datetime.fromisoformat(meta["updated"].replace("Z", "+00:00")).timestamp()
    return int(meta["size"]), updated, meta["generation"]


def sends_part(backend, path, index):
    """Does a request to this path (as a proxy sees it) send part `index`
    (0-based) of a multipart upload: S3's partNumber, Azure's block id, GCS's
    part object?"""
    if backend.name == "s3":
        return f"?partNumber={index + 1}&" in path
    if backend.name == "azure":
        m = re.search(r"blockid=([^&]+)", path)
        return bool(m) and base64.b64decode(urllib.parse.unquote(m.group(1))).endswith(b"-%08d" % index)
    return ".tl-part-" in path and f"-{index:04d}&uploadType=media" in path
