SELECT TOP 5 [a b], "c", N'it''s', 0x0AFF, @p1, @@ROWCOUNT FROM peer.mixed_100 /* fault:drop_after=3 */ -- x
GO
INSERT INTO t (a) VALUES (1.5e3); EXEC sp_executesql N'SELECT @x', N'@x INT', 1