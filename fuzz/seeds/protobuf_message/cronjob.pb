L

hello7
*/5 * * * *BEtc/UTC*2	OnFailure
hbusybox