-- id: large-pageable-copies
-- title: Large copies from pageable host memory
-- severity: warning
-- summary: Host-to-device copies of 8 MB or more from pageable memory (pin them).
-- fix-python: loader = DataLoader(dataset, batch_size=64, pin_memory=True)
-- fix-python: x = x.to("cuda", non_blocking=True)
-- fix-cpp: auto x_gpu = x.pin_memory().to(torch::kCUDA, /*non_blocking=*/true);
SELECT 'copy of ' || (bytes / 1000000) || ' MB from pageable memory' AS title,
       'A pageable copy is staged through a driver buffer and cannot overlap compute.' AS detail,
       start_ns, end_ns,
       (end_ns - start_ns) / 2 AS gain_ns, -- pinned copies run about twice as fast
       bytes
FROM memcpys
WHERE copy_kind = 1 AND src_kind = 1 AND bytes >= 8000000
ORDER BY end_ns - start_ns DESC;
