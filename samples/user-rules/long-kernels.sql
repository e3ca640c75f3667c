-- id: long-kernels
-- title: Kernels that run longer than 50 ms
-- severity: info
-- summary: The ten longest kernels over 50 ms: candidates for a closer look in Nsight Compute.
SELECT s.value AS title,
       'ran ' || ((k.end_ns - k.start_ns) / 1000000) || ' ms on stream ' || k.stream_id AS detail,
       k.start_ns, k.end_ns
FROM kernels k JOIN strings s ON s.id = k.name_id
WHERE k.end_ns - k.start_ns > 50000000
ORDER BY k.end_ns - k.start_ns DESC
LIMIT 10;
