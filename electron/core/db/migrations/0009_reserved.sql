-- 0009: reserved. Another branch adds the real 0009 (the profiling stage was told to use 0010);
-- this placeholder only keeps the numbers gapless on the profiling branch. At merge, drop this file
-- in favour of the real 0009 (a development database that applied it must be recreated).
SELECT 1;
