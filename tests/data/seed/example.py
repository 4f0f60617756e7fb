import datetime as dt
import pyarrow as pa
import timelake
lake = timelake.Lake("s3://my-bucket/lake", storage_options={"aws_region": "eu-west-1"})
schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
t = lake.create_table("iot.readings", schema, time_column="time", series_key=["device_id"], retention="365d")
batch = pa.table({"time": [dt.datetime.now(dt.timezone.utc)], "device_id": ["pump-7"], "temp": [71.5]}, schema=schema)
print(t.append(batch, batch_id="gateway-3-000042"))
hourly = lake.sql("""
SELECT time_bucket(INTERVAL '1 hour', time) AS hour, avg(temp) AS temp
FROM iot.readings WHERE device_id = 'pump-7' GROUP BY 1 ORDER BY 1
""")
